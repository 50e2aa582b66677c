// tutorial: prerequisites, numbered steps with checkpoints, troubleshooting; no guessed commands.
import { genrePipeline, listOf, strictObject, text, textList } from "./genre-pipeline.ts";

export const tutorial = genrePipeline({
  article_type: "tutorial",
  name: "Tutorial",
  description: "Step-by-step tutorial with prerequisites, numbered steps with checkpoints, and troubleshooting.",
  label: "tutorial",
  writer: "a technical writer whose step-by-step tutorials readers can follow without getting stuck",
  research_focus:
    "Pull out the exact procedure: prerequisites (tools, accounts, versions, skills), the steps in order with exact commands, settings, menu paths or measurements, what success looks like at each stage, common errors with their fixes, and safety warnings. Record version numbers and dates, since procedures change between versions.",
  outline_plan: `How to plan this tutorial:
- State the outcome: what the reader will have built or achieved at the end.
- List every prerequisite the steps rely on.
- Break the work into 4 to 12 steps, each with one clear goal, the actions to take in order, and a checkpoint the reader can verify.
- Add the problems readers most often hit, each paired with its fix.`,
  outline_schema: strictObject({
    title: text,
    outcome: text,
    prerequisites: textList,
    steps: listOf(strictObject({ heading: text, actions: textList, checkpoint: text })),
    troubleshooting: listOf(strictObject({ problem: text, fix: text })),
  }),
  draft_structure: `Structure for this tutorial:
- Introduction: what the reader will build or achieve, and roughly how long it takes when the notes say.
- Prerequisites: a bulleted list of what the reader needs before starting (tools, versions, accounts, skills).
- Steps: one ## heading per step in the form "Step 1: ...", each opening with its goal, then numbered actions in the imperative, with commands, code or settings in fenced code blocks, and ending with how to check that it worked.
- Troubleshooting: common problems and their fixes, one ### heading per problem.
- Next steps: where to go once everything works.
Use only commands, settings and version numbers found in the notes or the background; where a detail depends on the reader's setup, say so instead of guessing.`,
  polish_checks:
    "the steps are numbered without gaps and in an order that works; each step has one goal, imperative actions and a checkpoint; the prerequisites cover everything the steps use; commands and code blocks are complete and consistent; troubleshooting covers the likely failures.",
  meta_angle: "Say what the reader will be able to do by the end and how approachable the steps are.",
});
