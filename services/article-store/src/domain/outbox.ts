// The outbox of article creation: rows written with the article, relayed to the generation
// queue. A row's mark as sent commits only once its job is enqueued, so a crash in between
// re-enqueues on the next pass, which is harmless because the job id is the article's external_id.
import { asc, inArray, isNull, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { outbox } from "../db/schema.ts";

export interface OutboxEntry {
  externalId: string;
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
      .returning({ id: outbox.id, externalId: outbox.externalId, queue: outbox.queue });
    if (taken.length === 0) return 0;
    // In creation order, as they were read before.
    await enqueue(taken.sort((a, b) => a.id - b.id).map(({ externalId, queue }) => ({ externalId, queue })));
    return taken.length;
  });
}
