// song_meaning: an interpretation of the song's themes that paraphrases rather than reproduces lyrics
// (lyrics are copyrighted; short phrases are enough to anchor an interpretation).
import { genrePipeline, listOf, outlineSection, strictObject, text, textList } from "./genre-pipeline.ts";

/** Shared with the single-step variant so both treat lyrics and attribution the same way. */
export const SONG_MEANING_RULES = `Lyrics: do not reproduce long passages. Quote at most a short phrase of a few words at a time, and no more than a handful of such phrases in the whole article; paraphrase everything else.
Interpretation: present readings as readings ("the line suggests ..."), not as fact, unless the artist has confirmed them; keep the artist's own statements apart from interpretation and attribute them; never invent an interview, a statement or a backstory.`;

export const SONG_MEANING_STRUCTURE = `Structure for this song meaning article:
- Introduction: the song, the artist and its release context, and the central meaning in a sentence or two.
- Background: how and when the song was written, as far as the sources or the background say.
- Section-by-section meaning: ## sections that follow the song (verses, chorus, bridge) or its main themes, explaining imagery, metaphors and shifts in perspective.
- What the artist has said, kept apart from interpretation and attributed.
- Other readings, and why the song resonates with listeners.`;

export const songMeaning = genrePipeline({
  article_type: "song_meaning",
  name: "Song meaning",
  description: "Interpretation of a song's themes and imagery, paraphrasing rather than reproducing lyrics.",
  label: "song meaning article",
  writer: "a music writer who explains what songs mean with insight and respect for the artist's own words",
  research_focus:
    "Pull out the song's artist, album, release date and credits; what the artist or songwriters have said about its meaning, with where and when they said it; the circumstances in which it was written; notable critical readings; and its reception and cultural impact. Keep the artist's own statements apart from critics' and fans' interpretations. Do not copy out lyrics: when a line matters, name the section it is in and paraphrase it, quoting a few words at most.",
  outline_plan: `How to plan this song meaning article:
- Name the song, the artist and the central theme.
- Move through the song: its background, a walk through its sections (verses, chorus, bridge) and their imagery, what the artist has said, other readings, and why it resonates.
- Make every section carry an interpretive point, not a mere description.
- List the song's main themes in a few words each.`,
  outline_schema: strictObject({
    title: text,
    song: text,
    artist: text,
    central_theme: text,
    sections: listOf(outlineSection),
    themes: textList,
  }),
  draft_structure: `${SONG_MEANING_STRUCTURE}
${SONG_MEANING_RULES}`,
  polish_checks:
    "no more than a handful of lyric phrases are quoted and none runs beyond a few words, with longer passages paraphrased; the artist's statements are attributed and kept apart from interpretation; every section makes an interpretive point.",
  meta_angle: "Name the song and the artist, and hint at the meaning the article uncovers.",
});
