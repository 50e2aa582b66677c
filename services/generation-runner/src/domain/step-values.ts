// What a step's templates are filled with (spec 2.5), and what the finished pipeline yields:
// the content, its description and its word count.
import { renderRequirements, type TemplateValues } from "../../../kit/src/rules/prompt-template.ts";
import type { Article, GenerationSettings } from "../../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import type { SnapshotStep } from "../../../../proto/gen/articles/workflow_catalog/v1/snapshots_pb.ts";
import { countWords } from "../../../kit/src/words.ts";
import { bodyOf, envelopeOf, isJsonObject, parseJsonDocument } from "../../../kit/src/article-envelope.ts";

export interface BrandVoiceGuidance {
  name: string;
  description: string;
}

export interface RunContext {
  article: Article;
  settings: GenerationSettings;
  brandVoice: BrandVoiceGuidance | null;
  /** The rendered {research} text ("" when research is off). */
  research: string;
  /** The {sources} list of pages read ("" when research is off). */
  sources: string;
  /** Searchers' questions from research, preferred for the FAQ. */
  faqQuestions: string[];
  /** The rendered {requirements} brief: the same for every step of the run, so made once (requirementsOf). */
  requirements: string;
}

/** The {requirements} brief of the article (word count, tone, point of view, audience, extras, brand voice). */
export function requirementsOf(ctx: Omit<RunContext, "requirements">): string {
  const { article, settings } = ctx;
  return renderRequirements({
    target_word_count: article.targetWordCount,
    tone: article.tone,
    point_of_view: article.pointOfView,
    language: article.language,
    country_targeting: article.countryTargeting ?? null,
    target_audience: settings.targetAudience ?? null,
    target_keyword: article.targetKeyword ?? null,
    keywords: article.keywords,
    include_key_takeaways: settings.includeKeyTakeaways,
    include_faq: settings.includeFaq,
    faq_questions: ctx.faqQuestions,
    heading_capitalization: (settings.headingCapitalization as "title" | "sentence" | undefined) ?? null,
    brand_voice: ctx.brandVoice,
  });
}

/**
 * {outline}: the output of the built-in outline step (role "outline"); in a custom workflow,
 * which has no roles, the output of its first json step that has already run. Empty otherwise.
 */
export function outlineOf(steps: readonly SnapshotStep[], outputs: ReadonlyMap<number, string>): string {
  const byRole = steps.find((s) => s.role === "outline" && outputs.has(s.stepNumber));
  if (byRole) return outputs.get(byRole.stepNumber)!;
  const firstJson = steps.find((s) => s.role === "" && s.outputFormat === "json" && outputs.has(s.stepNumber));
  return firstJson ? outputs.get(firstJson.stepNumber)! : "";
}

export function templateValues(ctx: RunContext, steps: readonly SnapshotStep[], outputs: ReadonlyMap<number, string>): TemplateValues {
  const { article, settings } = ctx;
  return {
    title: article.title,
    target_keyword: article.targetKeyword ?? null,
    article_type: article.articleType,
    tone: article.tone,
    point_of_view: article.pointOfView,
    language: article.language,
    country_targeting: article.countryTargeting ?? null,
    target_word_count: article.targetWordCount,
    additional_context: article.additionalContext ?? null,
    additional_instruction: settings.additionalInstruction ?? null,
    requirements: ctx.requirements,
    research: ctx.research,
    sources: ctx.sources,
    outline: outlineOf(steps, outputs),
    step_outputs: outputs,
  };
}

/** Words of the body (markup tokens such as "#" or "-" hold no letter and do not count). */
export const wordCountOf = (content: string): number => countWords(bodyOf(content));

/**
 * The SEO description: the built-in meta step's meta_description; else a JSON envelope's
 * article.meta_description; else the top-level meta_description of the last json step that has
 * one (a custom workflow's meta step). Null when the workflow produced none.
 */
export function descriptionOf(steps: readonly SnapshotStep[], outputs: ReadonlyMap<number, string>, content: string): string | null {
  const metaStep = steps.find((s) => s.role === "meta" && outputs.has(s.stepNumber));
  const fromMeta = metaStep ? parseJsonDocument(outputs.get(metaStep.stepNumber)!) : undefined;
  if (isJsonObject(fromMeta) && typeof fromMeta.meta_description === "string" && fromMeta.meta_description.trim()) return fromMeta.meta_description.trim();
  const envelope = envelopeOf(content)?.article;
  if (envelope && typeof envelope.meta_description === "string" && envelope.meta_description.trim()) return envelope.meta_description.trim();
  for (const step of [...steps].reverse()) {
    if (step.outputFormat !== "json" || !outputs.has(step.stepNumber)) continue;
    const parsed = parseJsonDocument(outputs.get(step.stepNumber)!);
    if (isJsonObject(parsed) && typeof parsed.meta_description === "string" && parsed.meta_description.trim()) return parsed.meta_description.trim();
  }
  return null;
}
