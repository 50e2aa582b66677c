// The article events whose hand-over to the webhook endpoints failed (Redis away): kept in
// Postgres and handed over again, oldest first, by a background pass; each row goes once Redis
// took its event (a repeat is harmless: the event's id is its job's id and its deliveries' key).
import { asc, inArray } from "drizzle-orm";
import type { EndpointEventJob } from "../../../kit/src/queues.ts";
import type { Db } from "../db/client.ts";
import { endpointEventBacklog } from "../db/schema.ts";

const BATCH = 200;

export async function keepForLater(db: Db, events: EndpointEventJob[]): Promise<void> {
  if (events.length === 0) return;
  await db.insert(endpointEventBacklog).values(events.map((event) => ({ eventId: event.eventId, event }))).onConflictDoNothing();
}

/** Hands over up to a batch of kept events; the number handed over. A failed hand-over stops the pass. */
export async function handOverKept(db: Db, handOver: (event: EndpointEventJob) => Promise<void>): Promise<number> {
  const kept = await db.select().from(endpointEventBacklog).orderBy(asc(endpointEventBacklog.createdAt)).limit(BATCH);
  if (kept.length === 0) return 0;
  const done: string[] = [];
  try {
    for (const row of kept) {
      await handOver(row.event);
      done.push(row.eventId);
    }
  } finally {
    if (done.length > 0) await db.delete(endpointEventBacklog).where(inArray(endpointEventBacklog.eventId, done));
  }
  return done.length;
}
