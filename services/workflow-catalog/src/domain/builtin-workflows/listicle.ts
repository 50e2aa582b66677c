// listicle: numbered items that all follow one pattern, so the list is easy to scan and compare.
import { genrePipeline, listOf, strictObject, text, textList } from "./genre-pipeline.ts";

export const listicle = genrePipeline({
  article_type: "listicle",
  name: "Listicle",
  description: "Numbered list article whose items follow one consistent pattern.",
  label: "list article",
  writer: "a list-article writer whose numbered items are consistent, specific and easy to scan",
  research_focus:
    "Pull out candidate items for the list and, for each, the facts that set it apart: what it is, concrete details, who it suits, and any figures, prices or dates the sources give.",
  outline_plan: `How to plan this list article:
- Choose as many items as the length supports (usually 5 to 15), each distinct and worth its place; when the title states a number, plan exactly that many.
- Order the items deliberately (by rank, by theme or by sequence) and name that order in the ordering field.
- Give every item the same kinds of key points, so that all entries follow one pattern.
- Number the items from 1 without gaps.`,
  outline_schema: strictObject({
    title: text,
    introduction_angle: text,
    ordering: text,
    items: listOf(strictObject({ number: { type: "integer" }, name: text, summary: text, key_points: textList })),
    closing: text,
  }),
  draft_structure: `Structure for this list article:
- Introduction: what the list covers, why it matters to the reader, and how the items were chosen and ordered.
- Items: one ## heading per item in the form "1. Item name", numbered in outline order. Every item follows the same pattern: a one-sentence summary, then what it is, why it earns its place, and one practical detail, tip or caveat. Keep the items to a similar length.
- Closing: a short wrap-up that helps the reader choose or act, for example which item suits which need.`,
  polish_checks:
    "the numbering is continuous and matches the number in the title when there is one; every item follows the same pattern at a similar length; no two items overlap.",
  meta_angle: "State the number of items when the title has one, and what the list helps the reader do or choose.",
});
