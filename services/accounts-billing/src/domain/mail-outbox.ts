// The mail outbox: a request that mails someone writes a row in its own transaction and answers at
// once; the sender (mail-sender.ts) takes due rows, sends them and records the outcome. A row is
// taken with a lease (its next attempt moved past the send's longest time), so a sender that dies
// mid-send leaves it to be taken again, and two senders never take the same row at once. A mail
// can so go twice (sent, then the sender dies before recording it), never zero times while
// attempts remain.
import { and, asc, eq, isNull, lt, lte, min, or, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { mailOutbox } from "../db/schema.ts";

export type OutboxRow = typeof mailOutbox.$inferSelect;
export type MailKind = OutboxRow["kind"];

/** How long a taken row is left to its sender before another may take it again. */
export const SEND_LEASE_MS = 2 * 60_000;

export async function queueMail(db: Db, mail: { kind: MailKind; userId: number; accountId?: number; actorUserId?: number }): Promise<void> {
  await db.insert(mailOutbox).values({ kind: mail.kind, userId: mail.userId, accountId: mail.accountId ?? null, actorUserId: mail.actorUserId ?? null });
}

const pending = and(isNull(mailOutbox.sentAt), isNull(mailOutbox.failedAt));

/** Takes up to `limit` due rows for one attempt each. */
export async function takeDueMail(db: Db, limit: number, now = new Date()): Promise<OutboxRow[]> {
  return db.transaction(async (t) => {
    const tx = t as unknown as Db;
    const due = await tx
      .select({ id: mailOutbox.id })
      .from(mailOutbox)
      .where(and(pending, lte(mailOutbox.nextAttemptAt, now)))
      .orderBy(asc(mailOutbox.nextAttemptAt))
      .limit(limit)
      .for("update", { skipLocked: true });
    if (!due.length) return [];
    return tx
      .update(mailOutbox)
      .set({ attempts: sql`${mailOutbox.attempts} + 1`, nextAttemptAt: new Date(now.getTime() + SEND_LEASE_MS) })
      .where(sql`${mailOutbox.id} in (${sql.join(due.map((d) => sql`${d.id}`), sql`, `)})`)
      .returning();
  });
}

export async function recordSent(db: Db, id: number): Promise<void> {
  await db.update(mailOutbox).set({ sentAt: new Date(), lastError: null }).where(eq(mailOutbox.id, id));
}

/** A mail no longer worth sending (its user set a password meanwhile, or was disabled): none is sent. */
export async function recordNotNeeded(db: Db, id: number, reason: string): Promise<void> {
  await db.update(mailOutbox).set({ failedAt: new Date(), lastError: `not needed: ${reason}` }).where(eq(mailOutbox.id, id));
}

/** A failed attempt: the next is due after the backoff, or none is made once `attempts` are spent. */
export async function recordFailure(db: Db, row: OutboxRow, reason: string, settings: { attempts: number; backoffMs: number[] }): Promise<"retry" | "given up"> {
  const lastError = reason.slice(0, 500);
  if (row.attempts >= settings.attempts) {
    await db.update(mailOutbox).set({ failedAt: new Date(), lastError }).where(eq(mailOutbox.id, row.id));
    return "given up";
  }
  const wait = settings.backoffMs[Math.min(row.attempts - 1, settings.backoffMs.length - 1)] ?? 0;
  await db.update(mailOutbox).set({ nextAttemptAt: new Date(Date.now() + wait), lastError }).where(eq(mailOutbox.id, row.id));
  return "retry";
}

/** When the earliest pending mail is due (null: none pending). */
export async function nextDue(db: Db): Promise<Date | null> {
  const [row] = await db.select({ at: min(mailOutbox.nextAttemptAt) }).from(mailOutbox).where(pending);
  return row?.at ?? null;
}

/** The outbox keeps sent and given-up mail this long (for the operator to look into a complaint). */
export const OUTBOX_KEPT_MS = 30 * 86400_000;

/** Deletes sent and given-up mail older than OUTBOX_KEPT_MS; how many rows went. */
export async function pruneMail(db: Db, now = new Date()): Promise<number> {
  const before = new Date(now.getTime() - OUTBOX_KEPT_MS);
  const gone = await db.delete(mailOutbox).where(or(lt(mailOutbox.sentAt, before), lt(mailOutbox.failedAt, before))).returning({ id: mailOutbox.id });
  return gone.length;
}
