// Generic starter prompts for a client's copy of a built-in workflow (spec 4.10): built-in prompts
// are never exposed, so the copy gets a plain prompt per step role that keeps the step wired up
// (the variables its flags open, the earlier outputs it builds on) and leaves the craft to the client.

import type { BuiltinStep, BuiltinStepRole } from "./types.ts";

const SYSTEM_BY_ROLE: Record<BuiltinStepRole, string> = {
  research: "You are a careful research assistant. Summarise the supplied material accurately and say where each point comes from.",
  outline: "You are an editor who designs article structures. Respond with JSON only, following the schema attached to this step.",
  draft: "You are a skilled writer. Produce clear, accurate articles in markdown.",
  meta: "You are an SEO copywriter. Respond with JSON only, following the schema attached to this step.",
  polish: "You are an editor. Improve the text you are given and return the complete result in markdown.",
};

const TASK_BY_ROLE: Record<BuiltinStepRole, string> = {
  research: 'Summarise the material below into notes for an article titled "{title}", citing the source of each point.',
  outline: 'Create a structure for the article "{title}" in {language}.',
  draft: 'Write the article "{title}" in {language}, roughly {target_word_count} words long.',
  meta: 'Suggest an SEO title and a short meta description for the article "{title}".',
  polish: "Revise the article below for clarity, correctness and flow, keeping its meaning.",
};

// Which earlier outputs a step of each role builds on, nearest role first.
const INPUT_ROLES: Record<BuiltinStepRole, BuiltinStepRole[]> = {
  research: [],
  outline: ["research"],
  draft: ["outline", "research"],
  meta: ["draft"],
  polish: ["draft"],
};

const ROLE_CAPTION: Record<BuiltinStepRole, string> = {
  research: "Notes",
  outline: "Structure",
  draft: "Article",
  meta: "Summary",
  polish: "Text",
};

function earlierStepNumbers(step: BuiltinStep, siblings: readonly BuiltinStep[]): Array<[string, number]> {
  const earlier = siblings.filter((s) => s.step_number < step.step_number);
  if (earlier.length === 0) {
    // Without the workflow at hand, the step before is the best guess at what this one builds on.
    return step.step_number > 1 && step.role !== "research" ? [["Previous output", step.step_number - 1]] : [];
  }
  const found: Array<[string, number]> = [];
  for (const role of INPUT_ROLES[step.role]) {
    const source = earlier.filter((s) => s.role === role).at(-1);
    if (source) found.push([ROLE_CAPTION[role], source.step_number]);
  }
  return found;
}

/**
 * Starter prompts for one step of a duplicated built-in. Pass the workflow's steps as siblings so
 * {step_N_output} references point at the right earlier steps (e.g. polish builds on the draft,
 * not on the meta step just before it).
 */
export function starterPrompts(
  step: BuiltinStep,
  siblings: readonly BuiltinStep[] = [],
): { system: string; user: string } {
  const parts = [TASK_BY_ROLE[step.role]];
  for (const [caption, position] of earlierStepNumbers(step, siblings)) {
    parts.push(`${caption}:\n{step_${position}_output}`);
  }
  // Keep every context the step's flags open in the prompt; otherwise the flag would do nothing.
  if (step.include_research) parts.push("Material:\n{research}");
  if (step.include_outline) parts.push("Outline:\n{outline}");
  if (step.include_requirements) parts.push("Guidelines:\n{requirements}");
  if (step.include_additional_context) parts.push("Context:\n{additional_context}");
  if (step.include_additional_instruction) parts.push("Instructions:\n{additional_instruction}");
  return { system: SYSTEM_BY_ROLE[step.role], user: parts.join("\n\n") };
}
