// ultimate_guide: a comprehensive reference that takes a reader from fundamentals to advanced practice.
import { genrePipeline, listOf, outlineSection, strictObject, text } from "./genre-pipeline.ts";

export const ultimateGuide = genrePipeline({
  article_type: "ultimate_guide",
  name: "Ultimate guide",
  description: "Comprehensive long-form guide with a table of contents, chapters from basics to advanced, and a glossary.",
  label: "ultimate guide",
  writer: "a subject-matter writer who produces comprehensive, well-organised reference guides",
  research_focus:
    "Cover the topic end to end: definitions and fundamentals, how it works, the options and methods, costs or requirements, best practices, common mistakes, advanced tips and recent developments.",
  outline_plan: `How to plan this ultimate guide:
- Plan 6 to 12 chapters ordered from fundamentals to advanced practice, each with a one-sentence summary and 2 to 4 sub-sections.
- Make the chapters distinct: no two chapters should cover the same ground.
- State in introduction_promise what the reader will be able to do after reading.
- List in the glossary the terms a newcomer must know, each with a one-sentence definition; leave it empty when the topic has no jargon.`,
  outline_schema: strictObject({
    title: text,
    introduction_promise: text,
    chapters: listOf(strictObject({ heading: text, summary: text, subsections: listOf(outlineSection) })),
    glossary: listOf(strictObject({ term: text, definition: text })),
  }),
  draft_structure: `Structure for this ultimate guide:
- Introduction: who the guide is for, what they will be able to do after reading it, and how it is organised.
- Table of contents: right after the introduction (after the key takeaways when those are requested), a bulleted list linking to every chapter with markdown anchors, such as [Chapter heading](#chapter-heading).
- Chapters: one ## heading per chapter and one ### heading per sub-section, moving from fundamentals to advanced practice; define each term where it first appears; use tables for comparisons and numbered lists for processes.
- Glossary: a "Glossary" section before the conclusion when the outline lists terms.
- Conclusion: recap the path through the guide and point to sensible next steps.`,
  polish_checks:
    "the table of contents lists every chapter heading exactly as written and each anchor matches its heading; chapters progress from basics to advanced without repeating each other; every term is defined where it first appears.",
  meta_angle: "Signal that this is a complete guide and name two or three of the biggest questions it answers.",
});
