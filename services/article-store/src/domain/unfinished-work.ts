// What background work still owes an article, as the reconciler sees it: generation under way (or
// its hand-offs: originality, settlement, webhook), a completion webhook never delivered, or a
// section revision whose run was lost. Read
// by id in bounded batches through the articles_unfinished_work index, so a sweep costs the same
// with a million finished articles as with none.
import { and, asc, gt, inArray, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { articles, deliveryAttempts, sectionRevisions, unfinishedWork, type ArticleStatus } from "../db/schema.ts";
import { isRunningStatus } from "../../../kit/src/rules/article-statuses.ts";

export interface UnfinishedArticle {
  id: number;
  externalId: string;
  /** Whose line a generation job taken up again joins. */
  accountId: number;
  status: ArticleStatus;
  webhookUrl: string | null;
  currentVersionId: number | null;
  originalityChecked: boolean;
  deliveryFailed: boolean;
  /** Unchanged for longer than the bound. */
  stale: boolean;
  /** Some delivery attempt of its webhook is on record (only looked up where it matters). */
  deliveryRecorded: boolean;
}

/** The next `limit` unfinished articles after id `afterId`, in id order. */
/** The next `limit` unfinished articles after id `afterId`, in id order. */
export async function unfinishedArticlesAfter(db: Db, afterId: number, limit: number, staleAfterMs: number): Promise<UnfinishedArticle[]> {
  const rows = await db
    .select({
      id: articles.id,
      externalId: articles.externalId,
      accountId: articles.accountId,
      status: articles.status,
      webhookUrl: articles.webhookUrl,
      currentVersionId: articles.currentVersionId,
      originalityChecked: sql<boolean>`${articles.originalityCheckedAt} is not null`,
      deliveryFailed: sql<boolean>`${articles.deliveryFailedAt} is not null`,
      // The database's clock, the one updated_at was written with.
      stale: sql<boolean>`${articles.updatedAt} < now() - ${staleAfterMs}::float8 * interval '1 millisecond'`,
    })
    .from(articles)
    .where(and(unfinishedWork(articles), gt(articles.id, afterId)))
    .orderBy(asc(articles.id))
    .limit(limit);
  // Delivery records matter only for stale completed articles with a webhook: looked up for those alone, by index.
  const awaitingDelivery = rows.filter((a) => a.stale && a.status === "completed" && a.webhookUrl !== null).map((a) => a.id);
  const recorded = new Set<number>();
  if (awaitingDelivery.length > 0) {
    const found = await db.selectDistinct({ articleId: deliveryAttempts.articleId }).from(deliveryAttempts).where(inArray(deliveryAttempts.articleId, awaitingDelivery));
    for (const { articleId } of found) recorded.add(articleId);
  }
  return rows.map((a) => ({ ...a, deliveryRecorded: recorded.has(a.id) }));
}


/**
 * The job a stale article is owed, if it has no live one:
 * - running (queued, batching, writing, polishing): its generation job; a finished job with the
 *   article still running was lost too (its end never reached the article). A batching article's
 *   batch is tracked by that same job, parked between polls, and the run's checkpoint keeps the
 *   batch id, so a new job polls the same batch;
 * - completed without its originality check: the run's hand-offs (score, word settlement, webhook)
 *   never finished, or an edit's check was lost; a new generation job completes them (finished
 *   steps are read back, not rerun) or checks the current version; published without it: an
 *   edit's check was lost, and the job checks it;
 * - completed, checked, with a webhook_url, no delivery on record and not given up: its webhook.
 */
export type OwedJob =
  | { queue: "generation"; /** a finished job counts as lost */ finishedIsLost: boolean }
  | { queue: "webhooks"; versionId: number };

export function owedJob(a: UnfinishedArticle): OwedJob | undefined {
  if (!a.stale) return undefined;
  if (isRunningStatus(a.status)) return { queue: "generation", finishedIsLost: true };
  if (a.status !== "completed" && a.status !== "published") return undefined;
  if (!a.originalityChecked) return { queue: "generation", finishedIsLost: false };
  if (a.status === "published") return undefined;
  if (a.webhookUrl && !a.deliveryFailed && !a.deliveryRecorded && a.currentVersionId !== null) return { queue: "webhooks", versionId: a.currentVersionId };
  return undefined;
}

/** An article as the reconciler hands its generation job out again. */
export type TakenUpArticle = Pick<UnfinishedArticle, "id" | "externalId" | "accountId" | "status">;

/**
 * Finished articles with a section revision queued or running for longer than the bound, at most
 * `limit`: each is owed the generation job that runs its revision (the runner finds the revision
 * pending), should that job have been lost (Redis emptied, say). A live job is left alone by the
 * reconciler; a finished one with the revision still pending counts as lost. Read through the
 * one-pending-revision index, so the walk costs what the pending revisions do.
 */
export async function articlesWithStaleRevisions(db: Db, staleAfterMs: number, limit: number): Promise<TakenUpArticle[]> {
  return db
    .select({ id: articles.id, externalId: articles.externalId, accountId: articles.accountId, status: articles.status })
    .from(sectionRevisions)
    .innerJoin(articles, sql`${articles.id} = ${sectionRevisions.articleId}`)
    .where(sql`${sectionRevisions.status} in ('queued', 'running') and ${sectionRevisions.createdAt} < now() - ${staleAfterMs}::float8 * interval '1 millisecond'`)
    .orderBy(asc(sectionRevisions.articleId))
    .limit(limit);
}
