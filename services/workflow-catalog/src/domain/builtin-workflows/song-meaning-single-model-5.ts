// song_meaning_single_model_5: the song meaning article in ONE step, so batch mode (which only
// takes single-step workflows) can run it. No research step: it relies on the client's background
// and well-established knowledge, and says less rather than guess.
import type { BuiltinWorkflow } from "./types.ts";
import { SONG_MEANING_RULES, SONG_MEANING_STRUCTURE } from "./song-meaning.ts";

export const songMeaningSingleModel5: BuiltinWorkflow = {
  article_type: "song_meaning_single_model_5",
  name: "Song meaning (single step)",
  description: "Song meaning article written in a single step; suitable for batch mode.",
  revision: 1,
  steps: [
    {
      step_number: 1,
      step_name: "Write song meaning article",
      step_description: "Writes the complete song meaning article in one pass.",
      step_icon: "music",
      role: "draft",
      output_format: "markdown",
      timeout_seconds: 600,
      include_additional_context: true,
      include_additional_instruction: false,
      include_requirements: true,
      include_research: false,
      include_outline: false,
      json_schema: null,
      system:
        "You are a music writer who explains what songs mean with insight and respect for the artist's own words. You follow the editorial requirements on language, tone and point of view to the letter, you never invent facts, and you return the finished article as markdown only.",
      user: `Write the complete song meaning article "{title}" in the article's language ({language}).
Primary keyword (may be blank): {target_keyword}

{requirements}

Background from the client (may be blank; treat it as accurate and prefer it to your own recollection):
{additional_context}

${SONG_MEANING_STRUCTURE}
${SONG_MEANING_RULES}
Accuracy: rely on the background and on well-established knowledge of the song and the artist. If you are unsure of a release date, album, credit or artist statement, leave it out rather than guess.

Format:
- Voice: {tone} tone, {point_of_view} point of view, as the requirements describe.
- About {target_word_count} words, starting with the title as a single H1 (#), then ## and ### headings.
- Use the primary keyword in the first 100 words and in one subheading where it reads naturally; ignore this when no keyword is given.
- Output the article only: no preface, no notes to the editor, and no code fence around the whole article.`,
    },
  ],
};
