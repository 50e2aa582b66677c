// The monthly word ledger. A reservation holds words until the article settles (actual words)
// or releases them (failure). Every change is keyed by the caller's reference, so retries of a
// cross-service step never double-count.
import { and, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { plans, subscriptions, wordReservations } from "../db/schema.ts";
import { preparedPerDatabase } from "../../../kit/src/prepared-statements.ts";
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

type ReserveOutcome = "no_account" | "refused" | "existing" | "reserved";

// Every creation reserves and every completion settles: built once (kit/src/prepared-statements.ts),
// so a call only binds its values.
const statements = preparedPerDatabase((db: Db) => ({
  reserve: db
    .select({
      outcome: sql<ReserveOutcome>`outcome`,
      remainingWords: sql<number>`remaining_words`.mapWith(Number),
      // Null unless the outcome is "existing" or "reserved"; decoded as the table's own columns.
      reference: sql<string | null>`r_reference`,
      accountId: sql<number | null>`r_account_id`.mapWith(wordReservations.accountId),
      period: sql<string | null>`r_period`,
      words: sql<number | null>`r_words`.mapWith(wordReservations.words),
      state: sql<Reservation["state"] | null>`r_state`,
      createdAt: sql<Date | null>`r_created_at`.mapWith(wordReservations.createdAt),
      updatedAt: sql<Date | null>`r_updated_at`.mapWith(wordReservations.updatedAt),
    })
    .from(
      sql`accounts_billing.reserve_words(${sql.placeholder("accountId")}::int8, ${sql.placeholder("reference")}::text, ${sql.placeholder("words")}::int8, ${sql.placeholder("period")}::text, ${sql.placeholder("now")}::timestamptz)`,
    )
    .prepare("quota_reserve_words"),
  settle: db
    .update(wordReservations)
    .set({ state: "settled", words: sql`${sql.placeholder("words")}::int8`, updatedAt: sql`${sql.placeholder("at")}::timestamptz` })
    .where(and(eq(wordReservations.reference, sql.placeholder("reference")), inArray(wordReservations.state, ["reserved", "released"])))
    .returning()
    .prepare("quota_settle_words"),
  release: db
    .update(wordReservations)
    .set({ state: "released", updatedAt: sql`${sql.placeholder("at")}::timestamptz` })
    .where(and(eq(wordReservations.reference, sql.placeholder("reference")), eq(wordReservations.state, "reserved")))
    .returning()
    .prepare("quota_release_words"),
  byReference: db.select().from(wordReservations).where(eq(wordReservations.reference, sql.placeholder("reference"))).prepare("quota_reservation_by_reference"),
}));

export async function getWordUsage(db: Db, accountId: number, now = new Date()): Promise<WordUsage> {
  return usage(db, accountId, currentPeriod(now));
}

/**
 * Holds `words` of the account's month for `reference`, in one call of reserve_words (migration
 * 0001): the account's lock, the check and the hold in one round trip, committed when it returns.
 */
export async function reserveWords(db: Db, accountId: number, reference: string, words: number, now = new Date()) {
  const [row] = await statements(db).reserve.execute({ accountId, reference, words, period: currentPeriod(now), now: now.toISOString() });
  if (row.outcome === "no_account") throw notFound("No such account.");
  if (row.outcome === "refused") {
    const remaining = row.remainingWords;
    throw precondition(
      `The monthly word quota cannot cover this article: ${remaining} words remaining, ${words} required.`,
      { target_word_count: [`Insufficient monthly word quota: ${remaining} words remaining, ${words} required (120% of target_word_count).`] },
    );
  }
  const reservation: Reservation = {
    reference: row.reference!,
    accountId: row.accountId!,
    period: row.period!,
    words: row.words!,
    state: row.state!,
    createdAt: row.createdAt!,
    updatedAt: row.updatedAt!,
  };
  return { reservation, remainingWords: row.remainingWords };
}

/** Settles or releases a reservation; a retry finds it already moved and returns it as it is. */
async function finish(db: Db, reference: string, change: "settle" | "release", words = 0): Promise<Reservation> {
  const prepared = statements(db);
  const [updated] = change === "settle" ? await prepared.settle.execute({ reference, words, at: new Date().toISOString() }) : await prepared.release.execute({ reference, at: new Date().toISOString() });
  if (updated) return updated;
  const [existing] = await prepared.byReference.execute({ reference });
  if (!existing) throw notFound("No such reservation.");
  return existing; // already settled or released: the retry is a no-op
}

// Words actually generated always count, even when the hold was released meanwhile (a creation
// whose reply was lost looked failed to its caller, yet the article went on to generate).
export const settleWords = (db: Db, reference: string, actualWords: number) => finish(db, reference, "settle", Math.max(0, Math.round(actualWords)));

export const releaseWords = (db: Db, reference: string) => finish(db, reference, "release");
