// case_study: challenge, approach, results, lessons; no figure beyond what the sources state.
import { genrePipeline, listOf, strictObject, text, textList } from "./genre-pipeline.ts";

export const caseStudy = genrePipeline({
  article_type: "case_study",
  name: "Case study",
  description: "Evidence-based case study: challenge, approach, results and lessons, with no invented figures.",
  label: "case study",
  writer: "a case-study writer who tells evidence-based stories of how an organisation solved a problem",
  research_focus:
    "Pull out the organisation and its context, the challenge in its own terms, the approach or solution and how it was rolled out, results with exact figures and time frames, quotations from the people involved, and the lessons they drew. Record every figure exactly as stated, with its source.",
  outline_plan: `How to plan this case study:
- Set out the subject and its context.
- Plan four movements: the challenge, the approach, the results and the lessons.
- For each result, give the evidence behind it (a source number or "client background"); when no figures are available, plan qualitative results instead of numbers.
- Draw lessons that another team could apply.`,
  outline_schema: strictObject({
    title: text,
    subject: text,
    context: text,
    challenge: textList,
    approach: textList,
    results: listOf(strictObject({ result: text, evidence: text })),
    lessons: textList,
  }),
  draft_structure: `Structure for this case study:
- Summary: a short opening paragraph (or an "At a glance" list) naming the subject, the challenge, the solution and the headline result.
- The challenge: the situation and what was at stake, in concrete terms.
- The approach: what was done, in what order and why, including options that were rejected when the notes say so.
- The results: outcomes with the exact figures and time frames from the notes or the background, attributed; qualitative results described as such.
- Lessons: what other teams can take from it.
Never invent metrics, percentages, sums of money, time frames, customer names or quotations; a result without support in the notes or the background is left out or described qualitatively.`,
  polish_checks:
    "the challenge, approach, results and lessons are all present and in that order; every figure and quotation traces back to the notes or the background; results are not overstated beyond what the evidence shows.",
  meta_angle: "Name the subject and its headline result, using a figure only when the draft states it.",
});
