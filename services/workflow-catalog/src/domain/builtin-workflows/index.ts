// The built-in workflows: pipelines maintained by the service, shared by all projects, never listed
// and never serialized with their prompts (spec 2.3).
//
// Layout of the nine multi-step built-ins (every type except song_meaning_single_model_5):
//   1 research (include_research; markdown notes with source numbers)
//   2 outline  (json, schema-bound)
//   3 draft    (markdown, from outline + notes)
//   4 meta     (json {meta_title, meta_description}, written from the draft)
//   5 polish   (markdown: the final article)
// The last step's output is the article content (spec 2.5), so the article stays plain markdown and
// the meta step runs before the polish step. The runner finds the meta output through the step's
// `role` (see metaStepOf) and stores meta_description as the article description.
// song_meaning_single_model_5 is a single markdown step so batch mode can run it.

import { blogPost } from "./blog-post.ts";
import { caseStudy } from "./case-study.ts";
import { comparison } from "./comparison.ts";
import { listicle } from "./listicle.ts";
import { news } from "./news.ts";
import { productReview } from "./product-review.ts";
import { songMeaningSingleModel5 } from "./song-meaning-single-model-5.ts";
import { songMeaning } from "./song-meaning.ts";
import { tutorial } from "./tutorial.ts";
import { ultimateGuide } from "./ultimate-guide.ts";
import type { BuiltinStep, BuiltinStepRole, BuiltinWorkflow } from "./types.ts";

export type { BuiltinStep, BuiltinStepRole, BuiltinWorkflow, JsonSchema, OutputFormat } from "./types.ts";
export { starterPrompts } from "./starter-prompts.ts";

/** The reserved built-in article types, in the order of spec 2.3 / 2.7. */
export const BUILTIN_ARTICLE_TYPES = [
  "blog_post",
  "ultimate_guide",
  "listicle",
  "product_review",
  "comparison",
  "tutorial",
  "news",
  "case_study",
  "song_meaning",
  "song_meaning_single_model_5",
] as const;

/** Role of the step whose JSON output ({meta_title, meta_description}) sets the article description. */
export const META_STEP_ROLE: BuiltinStepRole = "meta";

// Frozen all the way down: these objects are shared by every caller and must never drift at run time.
function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

const WORKFLOWS: ReadonlyMap<string, BuiltinWorkflow> = new Map(
  [
    blogPost,
    ultimateGuide,
    listicle,
    productReview,
    comparison,
    tutorial,
    news,
    caseStudy,
    songMeaning,
    songMeaningSingleModel5,
  ].map((workflow) => [workflow.article_type, deepFreeze(workflow)]),
);

/**
 * Whether a custom workflow may not take this name. Compared case-insensitively and trimmed, so
 * "Blog_Post" cannot pose as the built-in next to it.
 */
export function isReservedArticleType(name: string): boolean {
  return (BUILTIN_ARTICLE_TYPES as readonly string[]).includes(name.trim().toLowerCase());
}

/** The built-in workflow of an exact reserved type, or undefined. */
export function builtinWorkflow(type: string): BuiltinWorkflow | undefined {
  return WORKFLOWS.get(type);
}

/** The step with the given role, if the workflow has one (the last such, should there be several). */
export function stepWithRole(workflow: BuiltinWorkflow, role: BuiltinStepRole): BuiltinStep | undefined {
  return workflow.steps.filter((step) => step.role === role).at(-1);
}

/** The meta description step, whose output carries meta_title and meta_description. */
export function metaStepOf(workflow: BuiltinWorkflow): BuiltinStep | undefined {
  return stepWithRole(workflow, META_STEP_ROLE);
}
