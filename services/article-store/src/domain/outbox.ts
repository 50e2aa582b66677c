// The outbox of article creation: rows written with the article, relayed to the generation
// queue. A row's mark as sent commits only once its job is enqueued, so a crash in between
// re-enqueues on the next pass, which is harmless: the job id is the article's external_id, and a
// job sent again after the first one finished (and left the queue) finds the run finished and ends.
// Sent rows are pruned once SENT_KEPT_MS old: they had grown one per article for good.
import { asc, inArray, isNull, lt, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { articles, outbox } from "../db/schema.ts";

export interface OutboxEntry {
  /** The row's id. */
  id: number;
  /** The article's id: creation order, which orders its account's line. */
  articleId: number;
  externalId: string;
  /** The article's account, whose line its job waits in (kit/src/fair-dispatch.ts). */
  accountId: number;
  queue: "generation";
}

/**
 * Relays one batch of unsent rows; returns how many were sent. Rows are taken with SKIP LOCKED,
 * so several replicas relay side by side without sending a row twice at once. They are marked
 * sent and locked in one statement, enqueued, then committed: should enqueueing fail, the
 * transaction rolls back and they stay unsent.
 */
export async function relayPendingEntries(db: Db, enqueue: (entries: OutboxEntry[]) => Promise<void>, batchSize = 100): Promise<number> {
  return db.transaction(async (t) => {
    const tx = t as unknown as Db;
    const taken = await tx
      .update(outbox)
      .set({ sentAt: sql`now()` })
      .where(inArray(outbox.id, tx.select({ id: outbox.id }).from(outbox).where(isNull(outbox.sentAt)).orderBy(asc(outbox.id)).limit(batchSize).for("update", { skipLocked: true })))
      .returning({ id: outbox.id, articleId: outbox.articleId, externalId: outbox.externalId, queue: outbox.queue, accountId: sql<number>`(select ${articles.accountId} from ${articles} where ${articles.id} = ${outbox.articleId})` });
    if (taken.length === 0) return 0;
    // In creation order, as they were read before.
    await enqueue(taken.sort((a, b) => a.id - b.id).map(({ id, articleId, externalId, queue, accountId }) => ({ id, articleId: Number(articleId), externalId, accountId: Number(accountId), queue })));
    return taken.length;
  });
}

/**
 * How long a sent row is kept: long enough to see what was relayed lately (with the job's own
 * record in Redis), short enough that the table stays the size of a few hours of creations.
 */
export const SENT_KEPT_MS = 3_600_000;
const PRUNE_BATCH = 10_000;

/**
 * Deletes the rows sent more than `keptMs` ago, oldest first in batches of `batch` (each its
 * own short statement, walking the primary key from the oldest rows, so no batch holds many
 * locks or scans the table); returns how many went. Unsent rows are never touched.
 */
export async function pruneSentEntries(db: Db, keptMs = SENT_KEPT_MS, batch = PRUNE_BATCH): Promise<number> {
  let pruned = 0;
  for (;;) {
    const oldest = db
      .select({ id: outbox.id })
      .from(outbox)
      .where(lt(outbox.sentAt, sql`now() - make_interval(secs => ${keptMs / 1000})`))
      .orderBy(asc(outbox.id))
      .limit(batch);
    const removed = await db.delete(outbox).where(inArray(outbox.id, oldest)).returning({ id: outbox.id });
    pruned += removed.length;
    if (removed.length < batch) return pruned;
  }
}
