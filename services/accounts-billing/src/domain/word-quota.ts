// The monthly word ledger. A reservation holds words until the article settles (actual words)
// or releases them (failure). Every change is keyed by the caller's reference, so retries of a
// cross-service step never double-count.
import { and, asc, eq, getTableColumns, gt, inArray, lt, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { held, plans, subscriptions, wordReservations } from "../db/schema.ts";
import { preparedPerDatabase } from "../../../kit/src/prepared-statements.ts";
import { CallBatches } from "../../../kit/src/call-batches.ts";
import { notFound, precondition, throwIfAny, type FieldErrors } from "../../../kit/src/errors.ts";
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
  // The usage kept by triggers plus the changes not yet folded (migration 0003), in one snapshot.
  const [taken] = await db.execute<{ settled_words: string; reserved_words: string }>(
    sql`select settled_words, reserved_words from accounts_billing.words_taken(${accountId}, ${period})`,
  );
  const monthlyWords = plan?.monthlyWords ?? 0;
  const usedWords = Number(taken!.settled_words);
  const reservedWords = Number(taken!.reserved_words);
  return { period, monthlyWords, usedWords, reservedWords, remainingWords: Math.max(0, monthlyWords - usedWords - reservedWords) };
}

/** Word usage changes folded in one transaction at most. */
export const WORD_USAGE_FOLD_BATCH = 10_000;

/** Folds about WORD_USAGE_FOLD_BATCH recorded usage changes, the oldest; the number folded (0 while another replica folds). */
export async function foldWordUsageChanges(db: Db): Promise<number> {
  const [{ folded }] = await db.execute<{ folded: number }>(sql`select accounts_billing.fold_word_usage_changes(${WORD_USAGE_FOLD_BATCH}) as folded`);
  return Number(folded);
}

type ReserveOutcome = "no_account" | "refused" | "existing" | "reserved";

// What reserve_words (migration 0001) answers, decoded; the held reservation's columns are null
// unless the outcome is "existing" or "reserved".
const reserveColumns = {
  outcome: sql<ReserveOutcome>`outcome`,
  remainingWords: sql<number>`remaining_words`.mapWith(Number),
  reference: sql<string | null>`r_reference`,
  accountId: sql<number | null>`r_account_id`.mapWith(wordReservations.accountId),
  period: sql<string | null>`r_period`,
  words: sql<number | null>`r_words`.mapWith(wordReservations.words),
  state: sql<Reservation["state"] | null>`r_state`,
  createdAt: sql<Date | null>`r_created_at`.mapWith(wordReservations.createdAt),
  updatedAt: sql<Date | null>`r_updated_at`.mapWith(wordReservations.updatedAt),
};

// Every creation reserves and every completion settles: built once (kit/src/prepared-statements.ts),
// so a call only binds its values.
const statements = preparedPerDatabase((db: Db) => ({
  reserve: db
    .select(reserveColumns)
    .from(
      sql`accounts_billing.reserve_words(${sql.placeholder("accountId")}::int8, ${sql.placeholder("reference")}::text, ${sql.placeholder("words")}::int8, ${sql.placeholder("period")}::text, ${sql.placeholder("now")}::timestamptz)`,
    )
    .prepare("quota_reserve_words"),
  // Several reservations in one statement, so one transaction and one commit: reserve_words runs
  // once per row, in the order of `n`, and each call sees the holds the earlier ones made. The asks
  // travel as one JSON parameter, so the statement is the same for any number of them.
  reserveMany: db
    .select({ n: sql<number>`n`.mapWith(Number), ...reserveColumns })
    .from(
      sql`(select * from json_to_recordset(${sql.placeholder("asks")}::json) as a(n int, account_id int8, reference text, words int8, period text, at timestamptz) order by n) asked
        cross join lateral accounts_billing.reserve_words(asked.account_id, asked.reference, asked.words, asked.period, asked.at)`,
    )
    .prepare("quota_reserve_words_batch"),
  settle: db
    .update(wordReservations)
    .set({ state: "settled", words: sql`${sql.placeholder("words")}::int8`, updatedAt: sql`${sql.placeholder("at")}::timestamptz` })
    .where(and(eq(wordReservations.reference, sql.placeholder("reference")), inArray(wordReservations.state, ["reserved", "released"])))
    .returning()
    .prepare("quota_settle_words"),
  // Several settlements in one statement, so one commit; the settlements travel as one JSON parameter.
  settleMany: db
    .update(wordReservations)
    .set({ state: "settled", words: sql`asked.words`, updatedAt: sql`asked.at` })
    .from(sql`json_to_recordset(${sql.placeholder("settlements")}::json) as asked(reference text, words int8, at timestamptz)`)
    .where(and(eq(wordReservations.reference, sql`asked.reference`), inArray(wordReservations.state, ["reserved", "released"])))
    .returning(getTableColumns(wordReservations))
    .prepare("quota_settle_words_batch"),
  release: db
    .update(wordReservations)
    .set({ state: "released", updatedAt: sql`${sql.placeholder("at")}::timestamptz` })
    .where(and(eq(wordReservations.reference, sql.placeholder("reference")), eq(wordReservations.state, "reserved")))
    .returning()
    .prepare("quota_release_words"),
  byReference: db.select().from(wordReservations).where(eq(wordReservations.reference, sql.placeholder("reference"))).prepare("quota_reservation_by_reference"),
  // A page of held reservations from the word_reservations_held index. A held row's updated_at is
  // when it was reserved: reserve_words sets it when it inserts or takes a released row again, and
  // nothing else writes a row that stays held. Its age is read on the database's clock.
  heldAfter: db
    .select({ reference: wordReservations.reference })
    .from(wordReservations)
    .where(
      and(
        held(wordReservations),
        gt(wordReservations.reference, sql.placeholder("afterReference")),
        lt(wordReservations.updatedAt, sql`now() - ${sql.placeholder("heldLongerThanMs")}::float8 * interval '1 millisecond'`),
      ),
    )
    .orderBy(asc(wordReservations.reference))
    .limit(sql.placeholder("limit"))
    .prepare("quota_held_reservations"),
}));

export async function getWordUsage(db: Db, accountId: number, now = new Date()): Promise<WordUsage> {
  return usage(db, accountId, currentPeriod(now));
}

interface ReservationAsk {
  accountId: number;
  reference: string;
  words: number;
  now: Date;
}

type ReserveRow = Awaited<ReturnType<ReturnType<typeof statements>["reserve"]["execute"]>>[number];

/** An ask's failure as its own answer in a batch. */
const asError = (error: unknown): Error => (error instanceof Error ? error : new Error(String(error)));

const reserveOne = async (db: Db, ask: ReservationAsk): Promise<ReserveRow> =>
  (await statements(db).reserve.execute({ ...ask, period: currentPeriod(ask.now), now: ask.now.toISOString() }))[0]!;

/**
 * The reservations asked for at once, in one statement. Every creation of an account takes the
 * account's lock and holds it until its commit, so one account's creations queue on that lock and
 * on a commit each; together they take it once and commit once. They go in account order, so two
 * batches locking the same accounts never wait on each other in a cycle, and in arrival order
 * within an account. Should the statement fail (a retry of the same creation racing its first
 * try on another replica, say), each is tried alone, so an error stays with the one it belongs to.
 */
async function reserveTogether(db: Db, asks: ReservationAsk[]): Promise<(ReserveRow | Error)[]> {
  if (asks.length === 1) return [await reserveOne(db, asks[0]!)];
  const order = asks.map((_, i) => i).sort((a, b) => asks[a]!.accountId - asks[b]!.accountId || a - b);
  try {
    const rows = await statements(db).reserveMany.execute({
      asks: JSON.stringify(
        order.map((i, n) => ({ n, account_id: asks[i]!.accountId, reference: asks[i]!.reference, words: asks[i]!.words, period: currentPeriod(asks[i]!.now), at: asks[i]!.now.toISOString() })),
      ),
    });
    const answers: ReserveRow[] = new Array(asks.length);
    for (const { n, ...row } of rows) answers[order[n]!] = row;
    return answers;
  } catch {
    return Promise.all(asks.map((ask) => reserveOne(db, ask).catch(asError)));
  }
}

// One gatherer per database handle; two batches at once, so a slow commit does not hold every
// account's creations (batches of different accounts run side by side).
const gatherers = preparedPerDatabase((db: Db) => new CallBatches<ReservationAsk, ReserveRow>((asks) => reserveTogether(db, asks), { maxSize: 200, maxRunning: 2 }));

/**
 * Holds `words` of the account's month for `reference`: reserve_words (migration 0001) takes the
 * account's lock, checks and holds, committed when it returns. Reservations asked for at the same
 * time share one statement and one commit (reserveTogether).
 */
export async function reserveWords(db: Db, accountId: number, reference: string, words: number, now = new Date()) {
  const row = await gatherers(db).ask({ accountId, reference, words, now });
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

/** The reservation as it is, when a change found nothing to move: a retry of a change already made is a no-op. */
async function asItIs(db: Db, reference: string): Promise<Reservation> {
  const [existing] = await statements(db).byReference.execute({ reference });
  if (!existing) throw notFound("No such reservation.");
  return existing;
}

interface Settlement {
  reference: string;
  words: number;
}

/**
 * The settlements asked for at once, in one statement and one commit (every completion settles).
 * A settlement touches its own reservation only, so they need no order. One that moved nothing (a
 * retry, a reference asked twice in the batch, an unknown reference) is answered as the
 * reservation is; should the statement fail, each is tried alone, so an error stays its own.
 */
async function settleTogether(db: Db, settlements: Settlement[]): Promise<(Reservation | Error)[]> {
  const prepared = statements(db);
  const at = new Date().toISOString();
  const alone = async ({ reference, words }: Settlement) => (await prepared.settle.execute({ reference, words, at }))[0] ?? asItIs(db, reference);
  const answered = async (answer: () => Promise<Reservation>) => answer().catch(asError);
  if (settlements.length === 1) return [await answered(() => alone(settlements[0]!))];
  // A reference asked twice settles with its first ask's words, as one after the other would.
  const firsts = new Map<string, Settlement>();
  for (const settlement of settlements) if (!firsts.has(settlement.reference)) firsts.set(settlement.reference, settlement);
  let settled: Map<string, Reservation>;
  try {
    const rows = await prepared.settleMany.execute({ settlements: JSON.stringify([...firsts.values()].map(({ reference, words }) => ({ reference, words, at }))) });
    settled = new Map(rows.map((row) => [row.reference, row]));
  } catch {
    // One after the other, so a reference asked twice keeps its first ask's words here too.
    const answers: (Reservation | Error)[] = [];
    for (const settlement of settlements) answers.push(await answered(() => alone(settlement)));
    return answers;
  }
  // The first ask of a reference takes the moved row; a repeat reads it as it now is.
  return Promise.all(
    settlements.map(({ reference }) => {
      const row = settled.get(reference);
      settled.delete(reference);
      return answered(async () => row ?? asItIs(db, reference));
    }),
  );
}

const settlers = preparedPerDatabase((db: Db) => new CallBatches<Settlement, Reservation>((settlements) => settleTogether(db, settlements), { maxSize: 200, maxRunning: 2 }));

// Words actually generated always count, even when the hold was released meanwhile (a creation
// whose reply was lost looked failed to its caller, yet the article went on to generate).
export const settleWords = (db: Db, reference: string, actualWords: number) => settlers(db).ask({ reference, words: Math.max(0, Math.round(actualWords)) });

/** Gives a reservation's words back; a retry finds it already moved and returns it as it is. */
export async function releaseWords(db: Db, reference: string): Promise<Reservation> {
  const [released] = await statements(db).release.execute({ reference, at: new Date().toISOString() });
  return released ?? asItIs(db, reference);
}

/** References per page of listHeldReservations: the default, and the most one call returns. */
export const HELD_PAGE_DEFAULT = 100;
export const HELD_PAGE_MAX = 1000;

export interface HeldReservationsQuery {
  /** Only reservations taken longer ago than this (0: every held one). */
  heldLongerThanMs: number;
  /** Page size; 0 for HELD_PAGE_DEFAULT. */
  limit: number;
  /** The last reference of the previous page; "" for the first. */
  afterReference: string;
}

/**
 * The references of reservations still held (neither settled nor released) and taken longer ago
 * than `heldLongerThanMs`, in reference order, one page after `afterReference`. A page shorter
 * than the limit is the last. Paged by reference rather than by age: the caller releases some of
 * what it reads, and a release rewrites the row's updated_at, while a reference never changes, so
 * the cursor stays where the walk left it.
 */
export async function listHeldReservations(db: Db, query: HeldReservationsQuery): Promise<string[]> {
  const errors: FieldErrors = {};
  if (!Number.isSafeInteger(query.heldLongerThanMs) || query.heldLongerThanMs < 0) errors.held_longer_than_ms = ["held_longer_than_ms must be 0 or more."];
  if (!Number.isInteger(query.limit) || query.limit < 0 || query.limit > HELD_PAGE_MAX) errors.limit = [`limit must be from 1 to ${HELD_PAGE_MAX} (0 for ${HELD_PAGE_DEFAULT}).`];
  throwIfAny(errors);
  const rows = await statements(db).heldAfter.execute({
    afterReference: query.afterReference,
    heldLongerThanMs: query.heldLongerThanMs,
    limit: query.limit || HELD_PAGE_DEFAULT,
  });
  return rows.map((row) => row.reference);
}
