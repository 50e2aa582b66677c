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

export interface UsageShare {
  id: number;
  words: number;
}

export interface UsageBucket {
  start: Date;
  settledWords: number;
  reservedWords: number;
  byProject: UsageShare[];
  byKey: UsageShare[];
}

export interface UsageReport {
  totals: WordUsage;
  days: UsageBucket[];
  hours: UsageBucket[];
}

const HOURS_SHOWN = 48;

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
    })
    .from(wordReservations)
    .leftJoin(reservationOrigins, eq(reservationOrigins.reference, wordReservations.reference))
    .where(and(eq(wordReservations.accountId, accountId), inArray(wordReservations.period, within.periods), ne(wordReservations.state, "released"), within.since ? gte(wordReservations.createdAt, within.since) : undefined))
    .groupBy(sql`1, 2, 3`)
    .orderBy(sql`1`);
  const out = new Map<number, UsageBucket & { projects: Map<number, number>; keys: Map<number, number> }>();
  for (const row of rows) {
    const at = row.start.getTime();
    let bucket = out.get(at);
    if (!bucket) out.set(at, (bucket = { start: row.start, settledWords: 0, reservedWords: 0, byProject: [], byKey: [], projects: new Map(), keys: new Map() }));
    const words = (row.settled || 0) + (row.reserved || 0);
    bucket.settledWords += row.settled || 0;
    bucket.reservedWords += row.reserved || 0;
    bucket.projects.set(row.projectId, (bucket.projects.get(row.projectId) ?? 0) + words);
    bucket.keys.set(row.keyId, (bucket.keys.get(row.keyId) ?? 0) + words);
  }
  const shares = (m: Map<number, number>) => [...m].sort((a, b) => a[0] - b[0]).map(([id, words]) => ({ id, words }));
  return [...out.values()].map(({ projects, keys, ...bucket }) => ({ ...bucket, byProject: shares(projects), byKey: shares(keys) }));
}

export async function usageReport(db: Db, accountId: number, now = new Date()): Promise<UsageReport> {
  const totals = await getWordUsage(db, accountId, now);
  const since = new Date(Math.floor(now.getTime() / 3600_000) * 3600_000 - (HOURS_SHOWN - 1) * 3600_000);
  // The hours reach back into the month before when the month is younger than 48 hours.
  const [days, hours] = await Promise.all([buckets(db, accountId, "day", { periods: [totals.period] }), buckets(db, accountId, "hour", { periods: [...new Set([currentPeriod(since), totals.period])], since })]);
  return { totals, days, hours };
}
