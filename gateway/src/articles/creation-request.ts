// The body of POST /v1/articles (spec 4.1, 8): every parameter checked field by field, the
// failures collected rather than thrown, so that the rules that need other services (article
// type, model, brand voice, image preset) can add theirs and all are reported at once.
import { checkUrlShape } from "../../../services/kit/src/rules/url-shape.ts";
import { DEFAULT_EXCLUDED_DOMAINS, isValidDomain } from "../../../services/kit/src/rules/research-domains.ts";
import { CITATION_STYLES } from "../../../services/kit/src/rules/citations.ts";
import { Validator } from "../validation.ts";
import type { FieldTable } from "../openapi/fields.ts";
import { INITIAL_STATUSES } from "../../../services/kit/src/rules/article-statuses.ts";

export const TONES = ["professional", "authoritative", "friendly", "conversational", "casual", "excited", "humorous"] as const;
export const POINTS_OF_VIEW = ["first_person", "first_person_plural", "second_person", "third_person"] as const;
export const LANGUAGES = ["en", "es", "fr", "de", "it", "pt", "ru", "ja", "ko", "zh"] as const;
export const COUNTRIES = ["US", "GB", "CA", "AU", "DE", "FR", "ES", "IT", "BR", "MX"] as const;
export const IMAGE_ASPECT_RATIOS = ["1:1", "16:9", "9:16", "3:4", "4:3"] as const;
export const HEADING_CAPITALIZATIONS = ["title", "sentence"] as const;
/**
 * The initial status override. Only the statuses an article may start in: anything later
 * (writing, completed, …) would skip generation, and failed would strand the reservation.
 * batching is only meaningful together with use_batch_api.
 */

export const LIMITS = {
  title: { min: 3, max: 255 },
  articleType: 255,
  targetWordCount: { min: 100, max: 10_000 },
  targetKeyword: 255,
  keywords: { maxItems: 15, maxItemLength: 80 },
  targetAudience: 1000,
  additionalContext: 25_000,
  additionalInstruction: 2000,
  webhookUrl: 500,
  model: 255,
  researchMaxSources: { min: 1, max: 20, fallback: 5 },
  researchMinContentWords: { min: 50, max: 5000, fallback: 100 },
  researchMaxWordsPerSource: { min: 100, max: 10_000, fallback: 1000 },
  researchDomains: 50,
  imageCount: { min: 0, max: 5 },
  // Record ids travel as int64; a larger JSON number could not be sent on, let alone exist.
  id: Number.MAX_SAFE_INTEGER,
} as const;

const ID = { type: "integer", min: 1, max: LIMITS.id } as const;

/**
 * Every field of the creation body, once: readArticleRequest takes presence, bounds and allowed
 * values from here, and the OpenAPI document's ArticleCreate schema is generated from it.
 */
export const ARTICLE_FIELDS = {
  project_id: { ...ID, required: true, description: "A project on an account the caller can access (update access).", example: 1 },
  title: { type: "string", required: true, ...LIMITS.title, description: "The article's title; also the {title} prompt variable.", example: "How to brew pour-over coffee" },
  article_type: { type: "string", required: true, max: LIMITS.articleType, description: "A built-in type (blog_post, ultimate_guide, listicle, product_review, comparison, tutorial, news, case_study, song_meaning, song_meaning_single_model_5) or a custom workflow slug of this project.", example: "blog_post" },
  target_word_count: { type: "integer", required: true, ...LIMITS.targetWordCount, description: "Requested length (a target, not a guarantee); 120% of it is reserved against the monthly word allowance.", example: 1500 },
  tone: { type: "string", required: true, enum: TONES, description: "Writing tone; also sets the generation temperature.", example: "friendly" },
  point_of_view: { type: "string", required: true, enum: POINTS_OF_VIEW, description: "Grammatical point of view.", example: "second_person" },
  language: { type: "string", required: true, enum: LANGUAGES, description: "Language code of the article.", example: "en" },
  target_keyword: { type: "string", max: LIMITS.targetKeyword, description: "Main keyword; the search query when research is enabled.", example: "pour-over coffee" },
  keywords: {
    type: "array",
    orCommaSeparated: true,
    maxItems: LIMITS.keywords.maxItems,
    items: { type: "string", max: LIMITS.keywords.maxItemLength, description: "One keyword." },
    description: "Secondary keywords: an array or one comma-separated string; returned as an array.",
    example: ["coffee grind size", "v60"],
  },
  country_targeting: { type: "string", enum: COUNTRIES, description: "Country the article targets.", example: "US" },
  research_enabled: { type: "boolean", description: "Research the web before writing; only for a workflow with a research step.", default: false },
  research_max_sources: { type: "integer", min: LIMITS.researchMaxSources.min, max: LIMITS.researchMaxSources.max, default: LIMITS.researchMaxSources.fallback, description: "Most sources research keeps." },
  research_min_content_words: { type: "integer", min: LIMITS.researchMinContentWords.min, max: LIMITS.researchMinContentWords.max, default: LIMITS.researchMinContentWords.fallback, description: "Shorter pages are discarded." },
  research_max_words_per_source: { type: "integer", min: LIMITS.researchMaxWordsPerSource.min, max: LIMITS.researchMaxWordsPerSource.max, default: LIMITS.researchMaxWordsPerSource.fallback, description: "Longer sources are truncated; must be at least research_min_content_words." },
  research_include_domains: { type: "array", maxItems: LIMITS.researchDomains, items: { type: "string", format: "hostname", description: "A domain name." }, description: "When set, research uses only these domains and the blocklist is ignored.", example: ["example.com"] },
  research_exclude_domains: { type: "array", maxItems: LIMITS.researchDomains, items: { type: "string", format: "hostname", description: "A domain name." }, description: "Domains research skips; omitted, a default blocklist applies." },
  webhook_url: { type: "string", max: LIMITS.webhookUrl, format: "uri", description: "Receives the completion webhook (http or https).", example: "https://example.com/hooks/articles" },
  use_batch_api: { type: "boolean", description: "Generate through the model's batch API (single-step workflows on a batch-enabled model).", default: false },
  humanize: { type: "boolean", description: "Run a humanization pass, stored as a new version; delays the webhook.", default: false },
  additional_context: { type: "string", max: LIMITS.additionalContext, description: "Background material for steps with include_additional_context." },
  additional_instruction: { type: "string", max: LIMITS.additionalInstruction, description: "Extra instruction for steps with include_additional_instruction." },
  target_audience: { type: "string", max: LIMITS.targetAudience, nullable: true, description: "Omitted: the project's default audience; null: no audience.", example: "home baristas" },
  model: { type: "string", max: LIMITS.model, description: "An active model (provider:model); omitted, the cheapest active model.", example: "openai:gpt-4o-mini" },
  brand_voice_id: { ...ID, description: "A brand voice of the same project." },
  include_key_takeaways: { type: "boolean", description: "A bulleted summary after the introduction.", default: false },
  include_faq: { type: "boolean", description: "4 to 6 questions after the conclusion.", default: false },
  heading_capitalization: { type: "string", enum: HEADING_CAPITALIZATIONS, description: "Heading case; omitted, left to the model." },
  status: { type: "string", enum: INITIAL_STATUSES, description: "Initial status override (batching only with use_batch_api); rarely used, leave unset." },
  citations: {
    type: "string",
    enum: CITATION_STYLES,
    default: "none",
    description: "How the text cites the research sources (needs research_enabled): none leaves the text as written; inline makes each [n] a link to its source; list keeps [n] and adds a Sources section.",
  },
  image_count: { type: "integer", ...LIMITS.imageCount, description: "Images generated into the article.", default: 0 },
  image_aspect_ratio: { type: "string", enum: IMAGE_ASPECT_RATIOS, description: "Aspect ratio of the images." },
  image_preset_id: { ...ID, description: "An image preset (consistent visual style) of the project." },
  publish: {
    type: "object",
    description: "Publish the article to a destination of the project when it completes: destination_id, and optionally status, publish_at, categories, tags, slug (as POST /v1/articles/{id}/publish).",
    example: { destination_id: 3, status: "publish", tags: ["espresso"] },
  },
} as const satisfies FieldTable;
const F = ARTICLE_FIELDS;

/** A creation request after its own checks; ids are still to be resolved against the project. */
export interface ArticleRequest {
  projectId: number;
  title: string;
  articleType: string;
  targetWordCount: number;
  tone: string;
  pointOfView: string;
  language: string;
  targetKeyword: string | null;
  keywords: string[];
  countryTargeting: string | null;
  researchEnabled: boolean;
  researchMaxSources: number;
  researchMinContentWords: number;
  researchMaxWordsPerSource: number;
  researchIncludeDomains: string[];
  researchExcludeDomains: string[];
  webhookUrl: string | null;
  useBatchApi: boolean;
  humanize: boolean;
  additionalContext: string | null;
  additionalInstruction: string | null;
  /** undefined: inherit the project's default audience; null: no audience. */
  targetAudience: string | null | undefined;
  /** Empty: the default (cheapest active) model. */
  model: string;
  brandVoiceId: number | null;
  includeKeyTakeaways: boolean;
  includeFaq: boolean;
  headingCapitalization: string | null;
  status: (typeof INITIAL_STATUSES)[number] | null;
  citations: (typeof CITATION_STYLES)[number];
  imageCount: number;
  imageAspectRatio: string | null;
  imagePresetId: number | null;
  /** `publish` as sent (an object), checked against the project's destinations later; null when absent. */
  publish: Record<string, unknown> | null;
}

const domainProblem = (value: string) => (isValidDomain(value.trim().toLowerCase()) ? null : `"${value}" is not a domain name (like example.com).`);

/** keywords: a comma-separated string or an array; always a trimmed array without blanks. */
function keywordsOf(v: Validator): string[] {
  const raw = v.input.keywords;
  if (raw === undefined || raw === null) return [];
  let list: unknown[];
  if (typeof raw === "string") list = raw.split(",");
  else if (Array.isArray(raw)) list = raw;
  else {
    v.fail("keywords", "The keywords field must be a comma-separated string or an array of strings.");
    return [];
  }
  // Checked before blanks are dropped, so an error's keywords.N is the position the client sent.
  const items = list.map((k) => (typeof k === "string" ? k.trim() : k));
  const kept = items.filter((k) => k !== "");
  if (kept.length > F.keywords.maxItems) v.fail("keywords", `The keywords field must not have more than ${F.keywords.maxItems} items.`);
  return v.items("keywords", items, { maxItemLength: F.keywords.items.max }) ? (kept as string[]) : [];
}

function webhookUrlOf(v: Validator): string | null {
  const url = v.string("webhook_url", F.webhook_url);
  if (typeof url !== "string") return null;
  const problem = checkUrlShape(url);
  if (problem) v.fail("webhook_url", `The webhook url must be a valid http or https URL: ${problem}.`);
  return url;
}

function domainsOf(v: Validator, field: "research_include_domains" | "research_exclude_domains"): string[] | undefined {
  const list = v.stringArray(field, { maxItems: F[field].maxItems, item: domainProblem });
  return list?.map((d) => d.trim().toLowerCase());
}

/** Checks the body on its own; `v.errors` holds every failure (the caller adds more, then throws). */
export function readArticleRequest(v: Validator): ArticleRequest {
  const request: ArticleRequest = {
    projectId: v.integer("project_id", F.project_id) ?? 0,
    title: v.string("title", F.title) ?? "",
    articleType: v.string("article_type", F.article_type) ?? "",
    targetWordCount: v.integer("target_word_count", F.target_word_count) ?? 0,
    tone: v.oneOf("tone", F.tone.enum, F.tone) ?? "",
    pointOfView: v.oneOf("point_of_view", F.point_of_view.enum, F.point_of_view) ?? "",
    language: v.oneOf("language", F.language.enum, F.language) ?? "",
    targetKeyword: v.string("target_keyword", F.target_keyword) ?? null,
    keywords: keywordsOf(v),
    countryTargeting: v.oneOf("country_targeting", F.country_targeting.enum, F.country_targeting) ?? null,
    researchEnabled: v.boolean("research_enabled", F.research_enabled) ?? F.research_enabled.default,
    researchMaxSources: v.integer("research_max_sources", F.research_max_sources) ?? F.research_max_sources.default,
    researchMinContentWords: v.integer("research_min_content_words", F.research_min_content_words) ?? F.research_min_content_words.default,
    webhookUrl: webhookUrlOf(v),
    useBatchApi: v.boolean("use_batch_api", F.use_batch_api) ?? F.use_batch_api.default,
    humanize: v.boolean("humanize", F.humanize) ?? F.humanize.default,
    additionalContext: v.string("additional_context", F.additional_context) ?? null,
    additionalInstruction: v.string("additional_instruction", F.additional_instruction) ?? null,
    targetAudience: v.string("target_audience", F.target_audience),
    model: (v.string("model", F.model) ?? "").trim(),
    brandVoiceId: v.integer("brand_voice_id", F.brand_voice_id) ?? null,
    includeKeyTakeaways: v.boolean("include_key_takeaways", F.include_key_takeaways) ?? F.include_key_takeaways.default,
    includeFaq: v.boolean("include_faq", F.include_faq) ?? F.include_faq.default,
    headingCapitalization: v.oneOf("heading_capitalization", F.heading_capitalization.enum, F.heading_capitalization) ?? null,
    status: v.oneOf("status", F.status.enum, F.status) ?? null,
    researchIncludeDomains: domainsOf(v, "research_include_domains") ?? [],
    // Omitted: the default blocklist, stored so the article keeps the list it was created with.
    researchExcludeDomains: domainsOf(v, "research_exclude_domains") ?? (v.has("research_exclude_domains") ? [] : [...DEFAULT_EXCLUDED_DOMAINS]),
    researchMaxWordsPerSource: v.integer("research_max_words_per_source", F.research_max_words_per_source) ?? F.research_max_words_per_source.default,
    citations: v.oneOf("citations", F.citations.enum, F.citations) ?? F.citations.default,
    imageCount: v.integer("image_count", F.image_count) ?? F.image_count.default,
    imageAspectRatio: v.oneOf("image_aspect_ratio", F.image_aspect_ratio.enum, F.image_aspect_ratio) ?? null,
    imagePresetId: v.integer("image_preset_id", F.image_preset_id) ?? null,
    publish: v.object("publish", F.publish) ?? null,
  };

  // Compared only when both are individually valid, so one mistake gives one message.
  const rangesValid = !v.errors.research_min_content_words && !v.errors.research_max_words_per_source;
  if (rangesValid && request.researchMaxWordsPerSource < request.researchMinContentWords) {
    v.fail("research_max_words_per_source", `The research max words per source field must be at least research_min_content_words (${request.researchMinContentWords}).`);
  }
  if (request.citations !== "none" && !request.researchEnabled && !v.errors.research_enabled) {
    v.fail("citations", `The citations ${request.citations} need research_enabled: without research there are no sources to cite.`);
  }
  if (request.status === "batching" && !request.useBatchApi) {
    v.fail("status", "The status batching is only possible with use_batch_api set to true.");
  }
  return request;
}
