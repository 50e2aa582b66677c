// What generation and delivery record on an article. Every change is idempotent (a retried job
// may repeat it) and runs on the locked article row. failed is terminal: nothing but a repeated
// failArticle touches a failed article again.
import type { JsonObject } from "@bufbuild/protobuf";
import { and, eq, max, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { articles, articleVersions, GENERATION_KINDS, type ArticleImage, type ArticleSource, type ArticleStatus } from "../db/schema.ts";
import { articleStatement } from "../db/article-rows.ts";
import { invalidFields, notFound, precondition, throwIfAny } from "../../../kit/src/errors.ts";
import { checkArticleImages } from "./article-images.ts";
import { checkArticleSources } from "./article-sources.ts";
import { getArticleByExternalId, lockArticle, requireUuid, updateArticle, type ArticleRecord } from "./articles.ts";
import { CANCELLED_REASON } from "../../../kit/src/article-events.ts";
import { isRunningStatus } from "../../../kit/src/rules/article-statuses.ts";

export type VersionRecord = typeof articleVersions.$inferSelect;

/** Who made a version the generation run added (the workload named in version histories). */
export const GENERATION_WORKLOAD = "generation-runner";

/** Statuses while generation is under way. */
/** Statuses a progress report may set. */
export const PROGRESS_STATUSES = ["writing", "polishing", "batching"] as const;
const DONE: readonly ArticleStatus[] = ["completed", "published"];
/** A finished article: completed, or published (a version delivered). */
export const isDone = (status: ArticleStatus) => DONE.includes(status);

const DECIMAL = /^\d{1,8}(\.\d{1,12})?$/;

export function checkCost(cost: string | undefined, errors: Record<string, string[]>): void {
  if (cost !== undefined && !DECIMAL.test(cost)) errors.cost = ["cost must be a non-negative decimal string, e.g. \"0.0123\"."];
}

function checkCount(name: string, value: number, errors: Record<string, string[]>): void {
  if (!Number.isInteger(value) || value < 0) errors[name] = [`${name} must be a non-negative integer.`];
}

export function refuseFailed(article: Pick<ArticleRecord, "status" | "failureReason">): void {
  if (article.status === "failed") throw precondition(`The article failed (${article.failureReason ?? "no reason recorded"}) and cannot change any more.`);
}

/** Runs `change` on the locked article inside one transaction. */
export function onArticle<T>(db: Db, externalId: string, change: (tx: Db, article: ArticleRecord) => Promise<T>): Promise<T> {
  return db.transaction(async (t) => {
    const tx = t as unknown as Db;
    return change(tx, await lockArticle(tx, externalId));
  });
}

export interface Progress {
  status: string;
  currentStep?: string;
  aiModelUsed?: string;
  cost?: string;
}

// The report applied to a running article in one statement: the update's own row lock stands for
// lockArticle (under read committed it re-reads a row changed while it waited and re-checks the
// status), and an article it leaves alone is read after to say why.
const applyProgress = articleStatement(`
  update article_store.articles set
    status = $2::text,
    current_step = coalesce($3::text, current_step),
    ai_model_used = coalesce($4::text, ai_model_used),
    cost = coalesce($5::numeric, cost),
    updated_at = now()
  where external_id = $1::uuid and status not in ('completed', 'published', 'failed')
  returning *`);

export async function recordProgress(db: Db, externalId: string, progress: Progress): Promise<ArticleRecord> {
  const errors: Record<string, string[]> = {};
  if (!(PROGRESS_STATUSES as readonly string[]).includes(progress.status)) errors.status = [`status must be one of ${PROGRESS_STATUSES.join(", ")}.`];
  checkCost(progress.cost, errors);
  throwIfAny(errors);
  const id = requireUuid(externalId);
  return untilApplied(db, id, () => applyProgress(db, [id, progress.status, progress.currentStep ?? null, progress.aiModelUsed ?? null, progress.cost ?? null]), (article) => {
    refuseFailed(article);
    // A late report (e.g. from a retried job) never moves a finished article back.
    return DONE.includes(article.status) ? article : undefined;
  });
}

/**
 * Runs a one-statement change of the article and returns the changed article; when the statement
 * changed nothing, `unchanged` judges the article as it is (throws, or answers with it). An
 * article it does not judge was created after the statement's snapshot: the change runs again,
 * a bounded number of times.
 */
async function untilApplied(
  db: Db,
  externalId: string,
  apply: () => Promise<ArticleRecord[]>,
  unchanged: (article: ArticleRecord) => ArticleRecord | undefined,
): Promise<ArticleRecord> {
  for (let attempt = 1; ; attempt++) {
    const [changed] = await apply();
    if (changed) return changed;
    const answer = unchanged(await getArticleByExternalId(db, externalId));
    if (answer) return answer;
    if (attempt === 3) throw new Error(`article ${externalId}: the change found nothing to change ${attempt} times`);
  }
}

export interface GenerationOutput {
  content: string;
  description?: string;
  actualWordCount: number;
  aiModelUsed: string;
  cost: string;
  /** A humanization pass follows: stay polishing until it adds its version. */
  moreVersionsFollow: boolean;
  /** The images placed in content, in position order. */
  images?: ArticleImage[];
  /** The originality score of content when it was scored before completion (0 to 100). */
  aiDetectionScore?: number;
  /** The pages the research read, numbered as content cites them. */
  sources?: ArticleSource[];
  /** Citations of unknown numbers removed from content. */
  citationsRemoved?: number;
  /** The brief checks of content, as the runner measured it. */
  quality?: JsonObject;
}

/** A score given with the version it scores is checked as RecordOriginality checks it. */
function checkScore(score: number | undefined, errors: Record<string, string[]>): void {
  if (score !== undefined && (!Number.isInteger(score) || score < 0 || score > 100)) errors.ai_detection_score = ["ai_detection_score must be an integer from 0 to 100."];
}

/** A new version's originality columns: checked now when it came with its score, else not yet checked. */
const checkedWith = (score: number | undefined) => (score === undefined ? {} : { aiDetectionScore: score, originalityCheckedAt: sql`now()` });
/** The article shows its current version's check. */
const checkOf = (version: VersionRecord) => ({ aiDetectionScore: version.aiDetectionScore, originalityCheckedAt: version.originalityCheckedAt });

// Version 1 and the finished article in one statement. `target` locks the article while it is
// still owed its first version (a failed one is never touched again); the update then applies to
// the row locked (read committed re-reads it), with the version's originality columns.
const storeFirstVersion = articleStatement(`
  with target as (
    select id, description from article_store.articles
    where external_id = $1::uuid and status <> 'failed' and current_version_id is null
    for update
  ), version as (
    insert into article_store.article_versions (article_id, number, kind, content, word_count, ai_detection_score, originality_checked_at, description, sources, citations_removed, quality, made_by_workload)
    select id, 1, 'generated', $2::text, $3::int4, $4::int4, case when $4::int4 is null then null else now() end, coalesce($5::text, description), $10::jsonb, $11::int4, $12::jsonb, '${GENERATION_WORKLOAD}' from target
    returning id, article_id, ai_detection_score, originality_checked_at
  )
  update article_store.articles a set
    content = $2::text,
    original_content = $2::text,
    current_version_id = v.id,
    ai_detection_score = v.ai_detection_score,
    originality_checked_at = v.originality_checked_at,
    description = coalesce($5::text, a.description),
    actual_word_count = $3::int4,
    ai_model_used = $6::text,
    cost = $7::numeric,
    images = $8::jsonb,
    sources = $10::jsonb,
    citations_removed = $11::int4,
    quality = $12::jsonb,
    status = case when $9::bool then 'polishing' else 'completed' end,
    current_step = case when $9::bool then a.current_step end,
    updated_at = now()
  from version v
  where a.id = v.article_id
  returning a.*`);

/** Stores version 1 (content and original_content) and finishes the article, once. */
export async function completeGeneration(db: Db, externalId: string, output: GenerationOutput): Promise<ArticleRecord> {
  const errors: Record<string, string[]> = {};
  checkCost(output.cost, errors);
  checkCount("actual_word_count", output.actualWordCount, errors);
  if (output.aiModelUsed.trim() === "") errors.ai_model_used = ["ai_model_used is required."];
  const images = [...(output.images ?? [])].sort((a, b) => a.position - b.position);
  checkArticleImages(images, errors);
  checkScore(output.aiDetectionScore, errors);
  const sources = [...(output.sources ?? [])].sort((a, b) => a.number - b.number);
  checkArticleSources(sources, output.citationsRemoved ?? 0, errors);
  throwIfAny(errors);
  const id = requireUuid(externalId);
  // A score given here is the version's first check, stored with it (one call where two were).
  const values = [id, output.content, output.actualWordCount, output.aiDetectionScore ?? null, output.description ?? null, output.aiModelUsed, output.cost, articles.images.mapToDriverValue(images), output.moreVersionsFollow, articles.sources.mapToDriverValue(sources), output.citationsRemoved ?? 0, output.quality ? articles.quality.mapToDriverValue(output.quality) : null];
  return untilApplied(db, id, () => storeFirstVersion(db, values), (article) => {
    refuseFailed(article);
    return article.currentVersionId !== null ? article : undefined; // already stored: the retry is a no-op
  });
}

export interface NewVersion {
  content: string;
  kind: string;
  actualWordCount: number;
  /** Marks the article completed after storing the version. */
  complete: boolean;
  cost?: string;
  /** The version's originality score when it was scored before being added (0 to 100). */
  aiDetectionScore?: number;
  /** The sources as this version cites them, replacing the article's; absent leaves them. */
  sources?: { sources: ArticleSource[]; citationsRemoved: number };
  /** The brief checks of the version's content; absent leaves the article's. */
  quality?: JsonObject;
}

/** Stores a further version and makes it current; one version per kind. */
export async function addVersion(db: Db, externalId: string, input: NewVersion): Promise<{ article: ArticleRecord; version: VersionRecord }> {
  const errors: Record<string, string[]> = {};
  if (input.kind.trim() === "") errors.kind = ["kind is required, e.g. \"humanized\"."];
  checkCount("actual_word_count", input.actualWordCount, errors);
  checkCost(input.cost, errors);
  checkScore(input.aiDetectionScore, errors);
  if (input.sources) checkArticleSources(input.sources.sources, input.sources.citationsRemoved, errors);
  throwIfAny(errors);
  return onArticle(db, externalId, async (tx, article) => {
    refuseFailed(article);
    if (article.currentVersionId === null) throw precondition("The article has no generated version yet.");
    // A run's kinds are added once each (a retried job finds its own); an edit's are never asked for here.
    const [existing] = (GENERATION_KINDS as readonly string[]).includes(input.kind)
      ? await tx
          .select()
          .from(articleVersions)
          .where(and(eq(articleVersions.articleId, article.id), eq(articleVersions.kind, input.kind)))
      : [];
    if (existing) {
      // The version is stored; a retry still gets to finish the article it was meant to finish.
      const finish = input.complete && isRunningStatus(article.status);
      return { article: finish ? await updateArticle(tx, article.id, { status: "completed", currentStep: null }) : article, version: existing };
    }
    const [{ last }] = await tx.select({ last: max(articleVersions.number) }).from(articleVersions).where(eq(articleVersions.articleId, article.id));
    // The new body is checked only when it came with its score.
    const [version] = await tx
      .insert(articleVersions)
      .values({
        articleId: article.id,
        number: (last ?? 0) + 1,
        kind: input.kind,
        content: input.content,
        wordCount: input.actualWordCount,
        ...checkedWith(input.aiDetectionScore),
        // What the article shows with it: the description stays, the sources are this version's when given.
        description: article.description,
        sources: input.sources?.sources ?? article.sources,
        citationsRemoved: input.sources?.citationsRemoved ?? article.citationsRemoved,
        quality: input.quality ?? article.quality,
        madeByWorkload: GENERATION_WORKLOAD,
      })
      .returning();
    const updated = await updateArticle(tx, article.id, {
      content: input.content,
      currentVersionId: version.id,
      actualWordCount: input.actualWordCount,
      ...checkOf(version),
      ...(input.cost !== undefined ? { cost: input.cost } : {}),
      ...(input.sources ? { sources: input.sources.sources, citationsRemoved: input.sources.citationsRemoved } : {}),
      ...(input.quality ? { quality: input.quality } : {}),
      ...(input.complete && isRunningStatus(article.status) ? { status: "completed" as const, currentStep: null } : {}),
    });
    return { article: updated, version };
  });
}

async function versionOf(tx: Db, article: ArticleRecord, versionId: number): Promise<VersionRecord> {
  const [version] = await tx
    .select()
    .from(articleVersions)
    .where(and(eq(articleVersions.id, versionId), eq(articleVersions.articleId, article.id)));
  if (!version) throw notFound("No such version of this article.");
  return version;
}

/** The detector's score of a version, and (for a client's edit or restore) its brief checks measured with it. */
export async function recordOriginality(db: Db, externalId: string, versionId: number, score: number, quality?: JsonObject): Promise<ArticleRecord> {
  if (!Number.isInteger(score) || score < 0 || score > 100) throw invalidFields({ ai_detection_score: ["ai_detection_score must be an integer from 0 to 100."] });
  return onArticle(db, externalId, async (tx, article) => {
    refuseFailed(article);
    const version = await versionOf(tx, article, versionId);
    const [checked] = await tx
      .update(articleVersions)
      .set({ aiDetectionScore: score, originalityCheckedAt: version.aiDetectionScore === score && version.originalityCheckedAt ? version.originalityCheckedAt : sql`now()`, ...(quality ? { quality } : {}) })
      .where(eq(articleVersions.id, version.id))
      .returning();
    if (article.currentVersionId !== version.id) return article;
    return updateArticle(tx, article.id, { aiDetectionScore: score, originalityCheckedAt: checked.originalityCheckedAt, ...(quality ? { quality } : {}) });
  });
}

/** `cost`, when given, is the run's total at the end: progress reports may not have carried the last steps' costs. */
export async function failArticle(db: Db, externalId: string, reason: string, cost?: string): Promise<ArticleRecord> {
  const errors: Record<string, string[]> = {};
  if (reason.trim() === "") errors.reason = ["reason is required."];
  checkCost(cost, errors);
  throwIfAny(errors);
  return onArticle(db, externalId, async (tx, article) => {
    // Already failed (a cancel, or a retried call): the run's final total may still arrive, and the
    // cost must equal what its steps cost (GET /v1/articles/{id}/steps).
    if (article.status === "failed") return cost === undefined || cost === article.cost ? article : updateArticle(tx, article.id, { cost });
    if (DONE.includes(article.status)) throw precondition(`The article is ${article.status}; only a running article can fail.`);
    return updateArticle(tx, article.id, { status: "failed", failureReason: reason, failedStep: article.currentStep, currentStep: null, ...(cost !== undefined ? { cost } : {}) });
  });
}

export async function markPublished(db: Db, externalId: string, versionId: number): Promise<ArticleRecord> {
  return onArticle(db, externalId, (tx, article) => markPublishedIn(tx, article, versionId));
}

/** markPublished on an article already locked in `tx`. */
export async function markPublishedIn(tx: Db, article: ArticleRecord, versionId: number): Promise<ArticleRecord> {
  refuseFailed(article);
  if (!DONE.includes(article.status)) throw precondition(`The article is ${article.status}; it can be published once completed.`);
  const version = await versionOf(tx, article, versionId);
  if (article.status === "published" && article.publishedVersionId === version.id) return article;
  return updateArticle(tx, article.id, { status: "published", publishedVersionId: version.id });
}

export async function markDeliveryFailed(db: Db, externalId: string, reason: string): Promise<ArticleRecord> {
  if (reason.trim() === "") throw invalidFields({ reason: ["reason is required."] });
  return onArticle(db, externalId, async (tx, article) => {
    refuseFailed(article);
    if (article.deliveryFailedAt && article.deliveryFailureReason === reason) return article;
    return updateArticle(tx, article.id, { deliveryFailedAt: article.deliveryFailedAt ?? sql`now()`, deliveryFailureReason: reason });
  });
}


/**
 * The client's cancel: a running article fails with CANCELLED_REASON, decided on the locked row,
 * so a completion racing it either committed first (the cancel is refused) or finds it failed.
 * `cancelled` is false when a previous cancel already did it.
 */
export async function cancelArticle(db: Db, externalId: string): Promise<{ article: ArticleRecord; cancelled: boolean }> {
  return onArticle(db, externalId, async (tx, article) => {
    if (article.status === "failed" && article.failureReason === CANCELLED_REASON) return { article, cancelled: false };
    if (!isRunningStatus(article.status)) {
      throw precondition(`The article is ${article.status}; only a queued, batching, writing or polishing article can be cancelled.`);
    }
    return { article: await updateArticle(tx, article.id, { status: "failed", failureReason: CANCELLED_REASON, failedStep: article.currentStep, currentStep: null }), cancelled: true };
  });
}
