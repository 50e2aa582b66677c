// comparison: options weighed on the same criteria, a table, and a verdict per use case.
import { genrePipeline, listOf, outlineSection, strictObject, text, textList } from "./genre-pipeline.ts";

export const comparison = genrePipeline({
  article_type: "comparison",
  name: "Comparison",
  description: "Even-handed comparison on shared criteria, with a comparison table and a verdict per use case.",
  label: "comparison article",
  writer: "an analyst who writes even-handed comparisons that help readers choose",
  research_focus:
    "For each option being compared, pull out comparable facts on the same criteria: features, specifications, pricing and plans (with dates), performance results, limitations, and the kinds of users each suits. Flag where the sources cover only one of the options.",
  outline_plan: `How to plan this comparison:
- Identify the options being compared, usually named in the title.
- Choose the 4 to 8 criteria that matter most to someone deciding between them, and say why each matters.
- Plan one section per criterion that compares every option on it.
- Give a verdict per use case (which option, for whom, and why) rather than a single winner when the answer depends on the reader's needs.`,
  outline_schema: strictObject({
    title: text,
    options: textList,
    criteria: listOf(strictObject({ name: text, why_it_matters: text })),
    sections: listOf(outlineSection),
    verdicts: listOf(strictObject({ use_case: text, pick: text, reason: text })),
  }),
  draft_structure: `Structure for this comparison:
- Introduction: the options, the decision the reader faces, and a one-paragraph short answer.
- Comparison table: right after the introduction (after the key takeaways when those are requested), a markdown table with one row per criterion and one column per option; write "not stated" where the notes give no value.
- Criterion sections: one ## section per criterion, comparing every option on it evenly and naming the stronger option with the reason.
- Verdict: which option to pick for which use case or reader, and why.
Treat every option with the same rigour; specifications, prices and test results come only from the notes or the background.`,
  polish_checks:
    "the table and the text agree cell for cell; every option gets a fair hearing on every criterion; the verdict follows from the evidence and names the best pick per use case.",
  meta_angle: "Name the options compared and the decision the comparison settles.",
});
