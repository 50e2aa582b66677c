// The monthly word ledger. A reservation holds words until the article settles (actual words)
// or releases them (failure). Every change is keyed by the caller's reference, so retries of a
// cross-service step never double-count.
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { accounts, plans, subscriptions, wordReservations } from "../db/schema.ts";
import { notFound, precondition } from "../../../kit/src/errors.ts";
import { currentPeriod } from "./quota-period.ts";

export type Reservation = typeof wordReservations.$inferSelect;

export interface WordUsage {
  period: string;
  monthlyWords: number;
  usedWords: number;
  reservedWords: number;
  remainingWords: number;
}

async function usage(db: Db, accountId: number, period: string): Promise<WordUsage> {
  const [plan] = await db
    .select({ monthlyWords: plans.monthlyWords })
    .from(subscriptions)
    .innerJoin(plans, eq(plans.id, subscriptions.planId))
    .where(and(eq(subscriptions.accountId, accountId), sql`${subscriptions.endedAt} is null`));
  const [sums] = await db
    .select({
      used: sql<string>`coalesce(sum(${wordReservations.words}) filter (where ${wordReservations.state} = 'settled'), 0)`,
      reserved: sql<string>`coalesce(sum(${wordReservations.words}) filter (where ${wordReservations.state} = 'reserved'), 0)`,
    })
    .from(wordReservations)
    .where(and(eq(wordReservations.accountId, accountId), eq(wordReservations.period, period)));
  const monthlyWords = plan?.monthlyWords ?? 0;
  const usedWords = Number(sums.used);
  const reservedWords = Number(sums.reserved);
  return { period, monthlyWords, usedWords, reservedWords, remainingWords: Math.max(0, monthlyWords - usedWords - reservedWords) };
}

export async function getWordUsage(db: Db, accountId: number, now = new Date()): Promise<WordUsage> {
  return usage(db, accountId, currentPeriod(now));
}

export async function reserveWords(db: Db, accountId: number, reference: string, words: number, now = new Date()) {
  return db.transaction(async (t) => {
    const tx = t as unknown as Db;
    // Locking the account row serialises reservations of one account: two creations can never
    // both pass when only one fits.
    const [account] = await tx.select({ id: accounts.id }).from(accounts).where(eq(accounts.id, accountId)).for("update");
    if (!account) throw notFound("No such account.");
    const [existing] = await tx.select().from(wordReservations).where(eq(wordReservations.reference, reference));
    const period = currentPeriod(now);
    // A released reservation is taken again (a retried creation after a failed one); a held or
    // settled one is returned as it is.
    if (existing && existing.state !== "released") return { reservation: existing, remainingWords: (await usage(tx, accountId, existing.period)).remainingWords };
    const before = await usage(tx, accountId, period);
    if (words > before.remainingWords) {
      throw precondition(
        `The monthly word quota cannot cover this article: ${before.remainingWords} words remaining, ${words} required.`,
        { target_word_count: [`Insufficient monthly word quota: ${before.remainingWords} words remaining, ${words} required (120% of target_word_count).`] },
      );
    }
    const [reservation] = existing
      ? await tx.update(wordReservations).set({ accountId, period, words, state: "reserved", updatedAt: now }).where(eq(wordReservations.reference, reference)).returning()
      : await tx.insert(wordReservations).values({ reference, accountId, period, words, state: "reserved" }).returning();
    return { reservation, remainingWords: before.remainingWords - words };
  });
}

async function finish(db: Db, reference: string, change: Partial<Reservation>, from: Reservation["state"][]): Promise<Reservation> {
  const [updated] = await db
    .update(wordReservations)
    .set({ ...change, updatedAt: new Date() })
    .where(and(eq(wordReservations.reference, reference), inArray(wordReservations.state, from)))
    .returning();
  if (updated) return updated;
  const [existing] = await db.select().from(wordReservations).where(eq(wordReservations.reference, reference));
  if (!existing) throw notFound("No such reservation.");
  return existing; // already settled or released: the retry is a no-op
}

// Words actually generated always count, even when the hold was released meanwhile (a creation
// whose reply was lost looked failed to its caller, yet the article went on to generate).
export const settleWords = (db: Db, reference: string, actualWords: number) =>
  finish(db, reference, { state: "settled", words: Math.max(0, Math.round(actualWords)) }, ["reserved", "released"]);

export const releaseWords = (db: Db, reference: string) => finish(db, reference, { state: "released" }, ["reserved"]);
