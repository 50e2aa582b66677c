// What generation and delivery record on an article. Every change is idempotent (a retried job
// may repeat it) and runs on the locked article row. failed is terminal: nothing but a repeated
// failArticle touches a failed article again.
import { and, eq, max, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { articleVersions, type ArticleImage, type ArticleStatus } from "../db/schema.ts";
import { invalidFields, notFound, precondition, throwIfAny } from "../../../kit/src/errors.ts";
import { checkArticleImages } from "./article-images.ts";
import { lockArticle, updateArticle, type ArticleRecord } from "./articles.ts";
import { CANCELLED_REASON } from "../../../kit/src/article-events.ts";

export type VersionRecord = typeof articleVersions.$inferSelect;

/** Statuses while generation is under way. */
const RUNNING: readonly ArticleStatus[] = ["queued", "batching", "writing", "polishing"];
/** Statuses a progress report may set. */
export const PROGRESS_STATUSES = ["writing", "polishing", "batching"] as const;
const DONE: readonly ArticleStatus[] = ["completed", "published"];
/** A finished article: completed, or published (a version delivered). */
export const isDone = (status: ArticleStatus) => DONE.includes(status);

const DECIMAL = /^\d{1,8}(\.\d{1,12})?$/;

function checkCost(cost: string | undefined, errors: Record<string, string[]>): void {
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

export async function recordProgress(db: Db, externalId: string, progress: Progress): Promise<ArticleRecord> {
  const errors: Record<string, string[]> = {};
  if (!(PROGRESS_STATUSES as readonly string[]).includes(progress.status)) errors.status = [`status must be one of ${PROGRESS_STATUSES.join(", ")}.`];
  checkCost(progress.cost, errors);
  throwIfAny(errors);
  return onArticle(db, externalId, async (tx, article) => {
    refuseFailed(article);
    // A late report (e.g. from a retried job) never moves a finished article back.
    if (DONE.includes(article.status)) return article;
    return updateArticle(tx, article.id, {
      status: progress.status as ArticleStatus,
      ...(progress.currentStep !== undefined ? { currentStep: progress.currentStep } : {}),
      ...(progress.aiModelUsed !== undefined ? { aiModelUsed: progress.aiModelUsed } : {}),
      ...(progress.cost !== undefined ? { cost: progress.cost } : {}),
    });
  });
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
}

/** A score given with the version it scores is checked as RecordOriginality checks it. */
function checkScore(score: number | undefined, errors: Record<string, string[]>): void {
  if (score !== undefined && (!Number.isInteger(score) || score < 0 || score > 100)) errors.ai_detection_score = ["ai_detection_score must be an integer from 0 to 100."];
}

/** A new version's originality columns: checked now when it came with its score, else not yet checked. */
const checkedWith = (score: number | undefined) => (score === undefined ? {} : { aiDetectionScore: score, originalityCheckedAt: sql`now()` });
/** The article shows its current version's check. */
const checkOf = (version: VersionRecord) => ({ aiDetectionScore: version.aiDetectionScore, originalityCheckedAt: version.originalityCheckedAt });

/** Stores version 1 (content and original_content) and finishes the article, once. */
export async function completeGeneration(db: Db, externalId: string, output: GenerationOutput): Promise<ArticleRecord> {
  const errors: Record<string, string[]> = {};
  checkCost(output.cost, errors);
  checkCount("actual_word_count", output.actualWordCount, errors);
  if (output.aiModelUsed.trim() === "") errors.ai_model_used = ["ai_model_used is required."];
  const images = [...(output.images ?? [])].sort((a, b) => a.position - b.position);
  checkArticleImages(images, errors);
  checkScore(output.aiDetectionScore, errors);
  throwIfAny(errors);
  return onArticle(db, externalId, async (tx, article) => {
    refuseFailed(article);
    if (article.currentVersionId !== null) return article; // already stored: the retry is a no-op
    // A score given here is the version's first check, stored with it (one call where two were).
    const [version] = await tx
      .insert(articleVersions)
      .values({ articleId: article.id, number: 1, kind: "generated", content: output.content, wordCount: output.actualWordCount, ...checkedWith(output.aiDetectionScore) })
      .returning();
    return updateArticle(tx, article.id, {
      ...checkOf(version),
      content: output.content,
      originalContent: output.content,
      currentVersionId: version.id,
      description: output.description ?? article.description,
      actualWordCount: output.actualWordCount,
      aiModelUsed: output.aiModelUsed,
      cost: output.cost,
      images,
      status: output.moreVersionsFollow ? "polishing" : "completed",
      ...(output.moreVersionsFollow ? {} : { currentStep: null }),
    });
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
}

/** Stores a further version and makes it current; one version per kind. */
export async function addVersion(db: Db, externalId: string, input: NewVersion): Promise<{ article: ArticleRecord; version: VersionRecord }> {
  const errors: Record<string, string[]> = {};
  if (input.kind.trim() === "") errors.kind = ["kind is required, e.g. \"humanized\"."];
  checkCount("actual_word_count", input.actualWordCount, errors);
  checkCost(input.cost, errors);
  checkScore(input.aiDetectionScore, errors);
  throwIfAny(errors);
  return onArticle(db, externalId, async (tx, article) => {
    refuseFailed(article);
    if (article.currentVersionId === null) throw precondition("The article has no generated version yet.");
    const [existing] = await tx
      .select()
      .from(articleVersions)
      .where(and(eq(articleVersions.articleId, article.id), eq(articleVersions.kind, input.kind)));
    if (existing) {
      // The version is stored; a retry still gets to finish the article it was meant to finish.
      const finish = input.complete && RUNNING.includes(article.status);
      return { article: finish ? await updateArticle(tx, article.id, { status: "completed", currentStep: null }) : article, version: existing };
    }
    const [{ last }] = await tx.select({ last: max(articleVersions.number) }).from(articleVersions).where(eq(articleVersions.articleId, article.id));
    // The new body is checked only when it came with its score.
    const [version] = await tx
      .insert(articleVersions)
      .values({ articleId: article.id, number: (last ?? 0) + 1, kind: input.kind, content: input.content, wordCount: input.actualWordCount, ...checkedWith(input.aiDetectionScore) })
      .returning();
    const updated = await updateArticle(tx, article.id, {
      content: input.content,
      currentVersionId: version.id,
      actualWordCount: input.actualWordCount,
      ...checkOf(version),
      ...(input.cost !== undefined ? { cost: input.cost } : {}),
      ...(input.complete && RUNNING.includes(article.status) ? { status: "completed" as const, currentStep: null } : {}),
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

export async function recordOriginality(db: Db, externalId: string, versionId: number, score: number): Promise<ArticleRecord> {
  if (!Number.isInteger(score) || score < 0 || score > 100) throw invalidFields({ ai_detection_score: ["ai_detection_score must be an integer from 0 to 100."] });
  return onArticle(db, externalId, async (tx, article) => {
    refuseFailed(article);
    const version = await versionOf(tx, article, versionId);
    const [checked] = await tx
      .update(articleVersions)
      .set({ aiDetectionScore: score, originalityCheckedAt: version.aiDetectionScore === score && version.originalityCheckedAt ? version.originalityCheckedAt : sql`now()` })
      .where(eq(articleVersions.id, version.id))
      .returning();
    if (article.currentVersionId !== version.id) return article;
    return updateArticle(tx, article.id, { aiDetectionScore: score, originalityCheckedAt: checked.originalityCheckedAt });
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
    return updateArticle(tx, article.id, { status: "failed", failureReason: reason, currentStep: null, ...(cost !== undefined ? { cost } : {}) });
  });
}

export async function markPublished(db: Db, externalId: string, versionId: number): Promise<ArticleRecord> {
  return onArticle(db, externalId, async (tx, article) => {
    refuseFailed(article);
    if (!DONE.includes(article.status)) throw precondition(`The article is ${article.status}; it can be published once completed.`);
    const version = await versionOf(tx, article, versionId);
    if (article.status === "published" && article.publishedVersionId === version.id) return article;
    return updateArticle(tx, article.id, { status: "published", publishedVersionId: version.id });
  });
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
    if (!RUNNING.includes(article.status)) {
      throw precondition(`The article is ${article.status}; only a queued, batching, writing or polishing article can be cancelled.`);
    }
    return { article: await updateArticle(tx, article.id, { status: "failed", failureReason: CANCELLED_REASON, currentStep: null }), cancelled: true };
  });
}
