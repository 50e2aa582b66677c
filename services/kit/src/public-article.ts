// The public article record of spec 2.2, exactly: no generation settings or internal fields.
// Shared by the gateway's responses and the completion webhook's `data`, so they cannot drift.
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { Project } from "../../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import type { Article, ArticleImage, ArticleSource, Publication } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import type { QualityReport } from "./rules/quality-report.ts";

export const iso = (t: Timestamp | undefined) => (t ? timestampDate(t).toISOString() : null);
export const optionalNumber = (n: bigint | undefined) => (n === undefined ? null : Number(n));

/** USD as a decimal string with at least two decimals ("0.00", "0.0123"), never rounded away. */
export function presentCost(cost: string): string {
  const [whole, fraction = ""] = (cost || "0").split(".");
  const digits = fraction.replace(/0+$/, "").padEnd(2, "0");
  return `${BigInt(whole || "0")}.${digits}`;
}

export type ProjectRef = Pick<Project, "id" | "name">;

/** An image of the article's content: where a reader loads it (no key needed) and how to lay it out. */
export const presentImage = (image: ArticleImage) => ({
  url: image.url,
  alt: image.alt,
  width: image.width,
  height: image.height,
  aspect_ratio: image.aspectRatio,
  position: image.position,
});

/** A page the article's research read: the number its text cites it by, and whether it does. */
export const presentSource = (s: ArticleSource) => ({
  number: s.number,
  url: s.url,
  title: s.title,
  site_name: s.siteName,
  fetched_at: iso(s.fetchedAt),
  cited: s.cited,
});

/** The article's publication to one destination: where the post is and how each attempt went. */
export const presentPublication = (p: Publication) => ({
  destination_id: Number(p.destinationId),
  destination_kind: p.destinationKind,
  state: p.state,
  remote_id: p.remoteId ?? null,
  remote_url: p.remoteUrl ?? null,
  remote_status: p.remoteStatus ?? null,
  version_id: optionalNumber(p.versionId),
  error: p.error ?? null,
  requested_at: iso(p.requestedAt),
  updated_at: iso(p.updatedAt),
  attempts: p.attempts.map((a) => ({
    attempt: a.attempt,
    attempted_at: iso(a.attemptedAt),
    outcome: a.outcome,
    status_code: a.statusCode ?? null,
    error: a.error ?? null,
    duration_ms: a.durationMs,
    version_id: Number(a.versionId),
  })),
});

export function presentArticle(article: Article, project: ProjectRef) {
  return {
    id: Number(article.id),
    external_id: article.externalId,
    title: article.title,
    description: article.description ?? null,
    content: article.content ?? null,
    original_content: article.originalContent ?? null,
    images: article.images.map(presentImage),
    current_version_id: optionalNumber(article.currentVersionId),
    published_version_id: optionalNumber(article.publishedVersionId),
    status: article.status,
    // Additive: why a failed article failed (a cancel says so), so clients need not guess.
    failure_reason: article.status === "failed" ? (article.failureReason ?? null) : null,
    article_type: article.articleType,
    target_keyword: article.targetKeyword ?? null,
    keywords: [...article.keywords],
    target_word_count: article.targetWordCount,
    actual_word_count: article.actualWordCount,
    tone: article.tone,
    point_of_view: article.pointOfView,
    language: article.language,
    country_targeting: article.countryTargeting ?? null,
    ai_model_used: article.aiModelUsed ?? null,
    cost: presentCost(article.cost),
    current_step: article.currentStep ?? null,
    humanize: article.humanize,
    ai_detection_score: article.aiDetectionScore ?? null,
    originality_checked_at: iso(article.originalityCheckedAt),
    additional_context: article.additionalContext ?? null,
    webhook_url: article.webhookUrl ?? null,
    // Additive: its posts on the project's publishing destinations (POST /v1/articles/{id}/publish).
    publications: article.publications.map(presentPublication),
    // Additive: the pages its research read (empty without research), how the text cites them,
    // and how many citations of a number that was not a source were removed from it.
    sources: article.sources.map(presentSource),
    citations: article.settings?.citations || "none",
    citations_removed: article.citationsRemoved,
    // Additive: the current version measured against the brief (checks and repairs), null for an
    // article not yet completed or completed before the checks existed.
    // The store keeps the report as the runner wrote it, in this shape.
    quality: (article.quality as QualityReport | undefined) ?? null,
    project: { id: Number(project.id), name: project.name },
    created_at: iso(article.createdAt),
    updated_at: iso(article.updatedAt),
  };
}

export type PresentedArticle = ReturnType<typeof presentArticle>;
