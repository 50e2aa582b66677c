// The body of POST /v1/articles (spec 4.1, 8): every parameter checked field by field, the
// failures collected rather than thrown, so that the rules that need other services (article
// type, model, brand voice, image preset) can add theirs and all are reported at once.
import { checkUrlShape } from "../../../services/kit/src/safe-http.ts";
import { DEFAULT_EXCLUDED_DOMAINS, isValidDomain } from "../../../services/generation-runner/src/research/domains.ts";
import { Validator } from "../validation.ts";

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
export const INITIAL_STATUSES = ["queued", "batching"] as const;

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
  imageCount: number;
  imageAspectRatio: string | null;
  imagePresetId: number | null;
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
  if (kept.length > LIMITS.keywords.maxItems) v.fail("keywords", `The keywords field must not have more than ${LIMITS.keywords.maxItems} items.`);
  return v.items("keywords", items, { maxItemLength: LIMITS.keywords.maxItemLength }) ? (kept as string[]) : [];
}

function webhookUrlOf(v: Validator): string | null {
  const url = v.string("webhook_url", { max: LIMITS.webhookUrl });
  if (typeof url !== "string") return null;
  const problem = checkUrlShape(url);
  if (problem) v.fail("webhook_url", `The webhook url must be a valid http or https URL: ${problem}.`);
  return url;
}

function domainsOf(v: Validator, field: string): string[] | undefined {
  const list = v.stringArray(field, { maxItems: LIMITS.researchDomains, item: domainProblem });
  return list?.map((d) => d.trim().toLowerCase());
}

/** Checks the body on its own; `v.errors` holds every failure (the caller adds more, then throws). */
export function readArticleRequest(v: Validator): ArticleRequest {
  const request: ArticleRequest = {
    projectId: v.integer("project_id", { required: true, min: 1, max: LIMITS.id }) ?? 0,
    title: v.string("title", { required: true, ...LIMITS.title }) ?? "",
    articleType: v.string("article_type", { required: true, max: LIMITS.articleType }) ?? "",
    targetWordCount: v.integer("target_word_count", { required: true, ...LIMITS.targetWordCount }) ?? 0,
    tone: v.oneOf("tone", TONES, { required: true }) ?? "",
    pointOfView: v.oneOf("point_of_view", POINTS_OF_VIEW, { required: true }) ?? "",
    language: v.oneOf("language", LANGUAGES, { required: true }) ?? "",
    targetKeyword: v.string("target_keyword", { max: LIMITS.targetKeyword }) ?? null,
    keywords: keywordsOf(v),
    countryTargeting: v.oneOf("country_targeting", COUNTRIES) ?? null,
    researchEnabled: v.boolean("research_enabled") ?? false,
    researchMaxSources: v.integer("research_max_sources", LIMITS.researchMaxSources) ?? LIMITS.researchMaxSources.fallback,
    researchMinContentWords: v.integer("research_min_content_words", LIMITS.researchMinContentWords) ?? LIMITS.researchMinContentWords.fallback,
    webhookUrl: webhookUrlOf(v),
    useBatchApi: v.boolean("use_batch_api") ?? false,
    humanize: v.boolean("humanize") ?? false,
    additionalContext: v.string("additional_context", { max: LIMITS.additionalContext }) ?? null,
    additionalInstruction: v.string("additional_instruction", { max: LIMITS.additionalInstruction }) ?? null,
    targetAudience: v.string("target_audience", { max: LIMITS.targetAudience, nullable: true }),
    model: (v.string("model", { max: LIMITS.model }) ?? "").trim(),
    brandVoiceId: v.integer("brand_voice_id", { min: 1, max: LIMITS.id }) ?? null,
    includeKeyTakeaways: v.boolean("include_key_takeaways") ?? false,
    includeFaq: v.boolean("include_faq") ?? false,
    headingCapitalization: v.oneOf("heading_capitalization", HEADING_CAPITALIZATIONS) ?? null,
    status: v.oneOf("status", INITIAL_STATUSES) ?? null,
    researchIncludeDomains: domainsOf(v, "research_include_domains") ?? [],
    // Omitted: the default blocklist, stored so the article keeps the list it was created with.
    researchExcludeDomains: domainsOf(v, "research_exclude_domains") ?? (v.has("research_exclude_domains") ? [] : [...DEFAULT_EXCLUDED_DOMAINS]),
    researchMaxWordsPerSource: v.integer("research_max_words_per_source", LIMITS.researchMaxWordsPerSource) ?? LIMITS.researchMaxWordsPerSource.fallback,
    imageCount: v.integer("image_count", LIMITS.imageCount) ?? 0,
    imageAspectRatio: v.oneOf("image_aspect_ratio", IMAGE_ASPECT_RATIOS) ?? null,
    imagePresetId: v.integer("image_preset_id", { min: 1, max: LIMITS.id }) ?? null,
  };

  // Compared only when both are individually valid, so one mistake gives one message.
  const rangesValid = !v.errors.research_min_content_words && !v.errors.research_max_words_per_source;
  if (rangesValid && request.researchMaxWordsPerSource < request.researchMinContentWords) {
    v.fail("research_max_words_per_source", `The research max words per source field must be at least research_min_content_words (${request.researchMinContentWords}).`);
  }
  if (request.status === "batching" && !request.useBatchApi) {
    v.fail("status", "The status batching is only possible with use_batch_api set to true.");
  }
  return request;
}
