// The usage report (GET /v1/usage): the ledger's month and its reservations summed per day and,
// for the last 48 hours, per hour, each by project and by key. Everything is read from
// word_reservations, the same rows the quota counts, so the report's numbers are the ledger's:
// released reservations count nowhere, held ones as reserved, settled ones as settled. A
// reservation counts in the bucket of the moment it was taken (its article's creation).
import { and, eq, gte, inArray, ne, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { reservationOrigins, wordReservations } from "../db/schema.ts";
import { getWordUsage, type WordUsage } from "./word-quota.ts";
import { currentPeriod } from "./quota-period.ts";
import { isUsdDecimal, parseUsd } from "../../../kit/src/rules/usd.ts";
import { invalidFields } from "../../../kit/src/errors.ts";

export interface UsageShare {
  id: number;
  words: number;
  /** USD of its settled articles, exact (pico-dollars). */
  cost: bigint;
}

export interface UsageBucket {
  start: Date;
  settledWords: number;
  reservedWords: number;
  cost: bigint;
  byProject: UsageShare[];
  byKey: UsageShare[];
}

export interface UsageReport {
  totals: WordUsage;
  days: UsageBucket[];
  hours: UsageBucket[];
}

const HOURS_SHOWN = 48;

/** An article's cost, kept with its settlement (a settlement repeated writes the same). */
export async function recordCost(db: Db, reference: string, costUsd: string): Promise<void> {
  if (!isUsdDecimal(costUsd)) throw invalidFields({ cost_usd: ["cost_usd must be a decimal amount of USD, e.g. 0.0123."] });
  await db.insert(reservationOrigins).values({ reference, costUsd }).onConflictDoUpdate({ target: reservationOrigins.reference, set: { costUsd } });
}

/** Where each reservation's words went; an origin is written beside its reservation (recordOrigin). */
export async function recordOrigin(db: Db, reference: string, projectId: number | undefined, keyId: number | undefined): Promise<void> {
  if (projectId === undefined && keyId === undefined) return;
  await db.insert(reservationOrigins).values({ reference, projectId: projectId ?? null, keyId: keyId ?? null }).onConflictDoNothing();
}

type Unit = "day" | "hour";

async function buckets(db: Db, accountId: number, unit: Unit, within: { periods: string[]; since?: Date }): Promise<UsageBucket[]> {
  const start = sql<Date>`date_trunc(${unit}, ${wordReservations.createdAt}, 'UTC')`.mapWith(wordReservations.createdAt);
  const rows = await db
    .select({
      start,
      projectId: sql<number>`coalesce(${reservationOrigins.projectId}, 0)`.mapWith(Number),
      keyId: sql<number>`coalesce(${reservationOrigins.keyId}, 0)`.mapWith(Number),
      settled: sql<number>`sum(${wordReservations.words}) filter (where ${wordReservations.state} = 'settled')`.mapWith(Number),
      reserved: sql<number>`sum(${wordReservations.words}) filter (where ${wordReservations.state} = 'reserved')`.mapWith(Number),
      // Exact, as text: a settled article's cost (numeric keeps every pico-dollar).
      cost: sql<string>`coalesce(sum(${reservationOrigins.costUsd}) filter (where ${wordReservations.state} = 'settled'), 0)::text`,
    })
    .from(wordReservations)
    .leftJoin(reservationOrigins, eq(reservationOrigins.reference, wordReservations.reference))
    .where(and(eq(wordReservations.accountId, accountId), inArray(wordReservations.period, within.periods), ne(wordReservations.state, "released"), within.since ? gte(wordReservations.createdAt, within.since) : undefined))
    .groupBy(sql`1, 2, 3`)
    .orderBy(sql`1`);
  type Share = { words: number; cost: bigint };
  const out = new Map<number, UsageBucket & { projects: Map<number, Share>; keys: Map<number, Share> }>();
  for (const row of rows) {
    const at = row.start.getTime();
    let bucket = out.get(at);
    if (!bucket) out.set(at, (bucket = { start: row.start, settledWords: 0, reservedWords: 0, cost: 0n, byProject: [], byKey: [], projects: new Map(), keys: new Map() }));
    const words = (row.settled || 0) + (row.reserved || 0);
    const cost = parseUsd(row.cost);
    bucket.settledWords += row.settled || 0;
    bucket.reservedWords += row.reserved || 0;
    bucket.cost += cost;
    for (const [shares, id] of [[bucket.projects, row.projectId], [bucket.keys, row.keyId]] as const) {
      const share = shares.get(id) ?? { words: 0, cost: 0n };
      shares.set(id, { words: share.words + words, cost: share.cost + cost });
    }
  }
  const shares = (m: Map<number, Share>) => [...m].sort((a, b) => a[0] - b[0]).map(([id, share]) => ({ id, ...share }));
  return [...out.values()].map(({ projects, keys, ...bucket }) => ({ ...bucket, byProject: shares(projects), byKey: shares(keys) }));
}

export async function usageReport(db: Db, accountId: number, now = new Date()): Promise<UsageReport> {
  const totals = await getWordUsage(db, accountId, now);
  const since = new Date(Math.floor(now.getTime() / 3600_000) * 3600_000 - (HOURS_SHOWN - 1) * 3600_000);
  // The hours reach back into the month before when the month is younger than 48 hours.
  const [days, hours] = await Promise.all([buckets(db, accountId, "day", { periods: [totals.period] }), buckets(db, accountId, "hour", { periods: [...new Set([currentPeriod(since), totals.period])], since })]);
  return { totals, days, hours };
}
