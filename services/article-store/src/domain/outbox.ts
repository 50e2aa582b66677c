// The outbox of article creation: rows written with the article, relayed to the generation
// queue. Enqueueing happens before a row is marked sent, so a crash in between re-enqueues on
// the next pass, which is harmless because the job id is the article's external_id.
import { asc, inArray, isNull } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { outbox } from "../db/schema.ts";

export interface OutboxEntry {
  externalId: string;
  queue: "generation";
}

/**
 * Relays one batch of unsent rows; returns how many were sent. Rows are locked with SKIP LOCKED,
 * so several replicas relay side by side without sending a row twice at once.
 */
export async function relayPendingEntries(db: Db, enqueue: (entries: OutboxEntry[]) => Promise<void>, batchSize = 100): Promise<number> {
  return db.transaction(async (t) => {
    const tx = t as unknown as Db;
    const rows = await tx
      .select({ id: outbox.id, externalId: outbox.externalId, queue: outbox.queue })
      .from(outbox)
      .where(isNull(outbox.sentAt))
      .orderBy(asc(outbox.id))
      .limit(batchSize)
      .for("update", { skipLocked: true });
    if (rows.length === 0) return 0;
    await enqueue(rows.map(({ externalId, queue }) => ({ externalId, queue })));
    await tx
      .update(outbox)
      .set({ sentAt: new Date() })
      .where(
        inArray(
          outbox.id,
          rows.map((r) => r.id),
        ),
      );
    return rows.length;
  });
}
