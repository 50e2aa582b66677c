// news: inverted pyramid, every claim attributed, no speculation.
import { genrePipeline, listOf, outlineSection, strictObject, text } from "./genre-pipeline.ts";

export const news = genrePipeline({
  article_type: "news",
  name: "News",
  description: "Inverted-pyramid news story with attributed facts and no speculation.",
  label: "news article",
  writer: "a news reporter and editor who writes accurate, attributed, inverted-pyramid stories",
  research_focus:
    "Pull out the who, what, when, where, why and how; exact dates and times with time zones; figures; named people and organisations with their roles; direct quotations with speaker and source; official statements; and the background events. Note how recent each source is and whether it reports first-hand or repeats others.",
  outline_plan: `How to plan this news article:
- Write a headline that states the news itself.
- Write a lede that answers who, what, when and where in one sentence.
- Write a nut graf on why the news matters to the reader.
- Order the sections by descending importance, ending with background.
- Say what happens next only as far as the sources state it; leave whats_next empty otherwise.`,
  outline_schema: strictObject({
    headline: text,
    lede: text,
    nut_graf: text,
    sections: listOf(outlineSection),
    whats_next: text,
  }),
  draft_structure: `Structure for this news article:
- Lede: the first paragraph, one or two sentences answering who, what, when and where.
- Nut graf: the second paragraph, on why this matters to the reader.
- Body: details in descending order of importance, with ## subheadings in longer stories; every claim attributed in the text ("the company said in a statement", "according to ..."); direct quotations exactly as the notes give them.
- Background, then what comes next, only as far as the sources state it.
News rules: report facts, not opinion; no speculation, predictions or motives the sources do not state; exact dates instead of "yesterday" or "last week"; when sources conflict, report both versions and attribute each; never invent a quotation, a source or a figure.`,
  polish_checks:
    "the lede carries the most important fact; paragraphs run in descending order of importance; every claim is attributed; there is no speculation, editorial opinion or loaded adjective; dates are exact; quotations match the notes word for word.",
  meta_angle: "State the news itself: who did what, and when.",
  // News runs on shorter copy; the tighter budgets surface a stuck provider sooner.
  timeouts: { draft: 420, polish: 420 },
});
