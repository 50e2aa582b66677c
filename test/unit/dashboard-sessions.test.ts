// Dashboard sessions and one-time links below the API, on a real Postgres in a throwaway
// database, with the clock passed in: a session ends after 8 idle hours and 7 days after sign-in
// whatever its activity; a link ends after 72 hours and works once. And the usage report's
// buckets: a reservation counts in the day and hour it was taken, released ones nowhere, the
// hours reach back 48 hours.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { eq } from "drizzle-orm";
import { openScratchDatabase, type ScratchDatabase } from "../harness/scratch-database.ts";
import { schema } from "../../services/accounts-billing/src/db/client.ts";
import * as identity from "../../services/accounts-billing/src/domain/identity.ts";
import * as quota from "../../services/accounts-billing/src/domain/word-quota.ts";
import * as sessions from "../../services/accounts-billing/src/domain/sessions.ts";
import { recordCost, recordOrigin, usageReport } from "../../services/accounts-billing/src/domain/usage-report.ts";

let database: ScratchDatabase<typeof schema>;
const PASSWORD = "correct horse battery";
const HOUR = 3600_000;

beforeAll(async () => {
  database = await openScratchDatabase("dashboard_sessions", { schemaName: "accounts_billing", schema, migrationsFolder: new URL("../../services/accounts-billing/src/db/migrations", import.meta.url) });
});

afterAll(() => database?.drop());

async function userWithPassword(): Promise<identity.UserRow> {
  const user = await identity.createUser(database.db, "Ada", `ada-${randomUUID()}@example.com`);
  const link = await sessions.createPasswordLink(database.db, user.id);
  await sessions.redeemLink(database.db, link.token, PASSWORD);
  return user;
}

const at = (base: Date, ms: number) => new Date(base.getTime() + ms);

describe("sessions", () => {
  test("a session ends after 8 hours without a request", async () => {
    const user = await userWithPassword();
    const { token } = await sessions.signIn(database.db, user.email, PASSWORD);
    const start = new Date();
    expect((await sessions.authenticateSession(database.db, token, at(start, 7 * HOUR))).user.id).toBe(user.id);
    // Activity 7 hours in: the idle limit runs from there.
    expect((await sessions.authenticateSession(database.db, token, at(start, 14 * HOUR))).user.id).toBe(user.id);
    await expect(sessions.authenticateSession(database.db, token, at(start, 22.5 * HOUR))).rejects.toThrow();
  });

  test("a session ends 7 days after sign-in however active it is", async () => {
    const user = await userWithPassword();
    const { token, expiresAt } = await sessions.signIn(database.db, user.email, PASSWORD);
    const start = new Date();
    for (let h = 6; h < 7 * 24; h += 6) await sessions.authenticateSession(database.db, token, at(start, h * HOUR));
    expect(expiresAt.getTime() - start.getTime()).toBeLessThanOrEqual(7 * 24 * HOUR);
    await expect(sessions.authenticateSession(database.db, token, at(start, 7 * 24 * HOUR + 60_000))).rejects.toThrow();
  });

  test("a link works once, and not after 72 hours", async () => {
    const user = await identity.createUser(database.db, "Bo", `bo-${randomUUID()}@example.com`);
    const old = await sessions.createPasswordLink(database.db, user.id, new Date(Date.now() - 73 * HOUR));
    await expect(sessions.redeemLink(database.db, old.token, PASSWORD)).rejects.toThrow("This link is not valid any more");
    const fresh = await sessions.createPasswordLink(database.db, user.id);
    expect((await sessions.redeemLink(database.db, fresh.token, PASSWORD)).user.id).toBe(user.id);
    await expect(sessions.redeemLink(database.db, fresh.token, PASSWORD)).rejects.toThrow("This link is not valid any more");
  });

  test("the password is kept as argon2id, never as given", async () => {
    const user = await userWithPassword();
    const [row] = await database.db.select().from(schema.users).where(eq(schema.users.id, user.id));
    expect(row!.passwordHash).toStartWith("$argon2id$");
    expect(row!.passwordHash).not.toContain(PASSWORD);
  });
});

describe("the usage report", () => {
  test("reservations count in the day and hour they were taken, by project and key; released ones nowhere", async () => {
    const db = database.db;
    const plan = await identity.createPlan(db, { name: "Plan", monthlyWords: 10_000, requestsPerMinute: 1, requestsPerHour: 1, requestsPerDay: 1 });
    const account = await identity.createAccount(db, "Account", plan.id);
    const reserve = async (when: string, words: number, projectId: number, keyId?: number) => {
      const reference = randomUUID();
      await quota.reserveWords(db, account.id, reference, words, new Date(when));
      // Taken at that moment (created_at is the database's clock when it is written).
      await db.update(schema.wordReservations).set({ createdAt: new Date(when) }).where(eq(schema.wordReservations.reference, reference));
      await recordOrigin(db, reference, projectId, keyId);
      return reference;
    };
    const early = await reserve("2026-03-05T10:15:00Z", 600, 1, 7);
    await quota.settleWords(db, early, 500);
    await recordCost(db, early, "0.001234567891");
    await reserve("2026-03-06T23:30:00Z", 300, 2);
    const released = await reserve("2026-03-06T23:40:00Z", 900, 2, 7);
    await quota.releaseWords(db, released);

    const report = await usageReport(db, account.id, new Date("2026-03-07T12:30:00Z"));
    expect(report.totals).toMatchObject({ period: "2026-03", usedWords: 500, reservedWords: 300, remainingWords: 9_200 });
    const cost = 1_234_567_891n; // pico-dollars: "0.001234567891", kept exactly
    expect(report.days.map((d) => ({ start: d.start.toISOString(), settled: d.settledWords, reserved: d.reservedWords, cost: d.cost, byProject: d.byProject, byKey: d.byKey }))).toEqual([
      { start: "2026-03-05T00:00:00.000Z", settled: 500, reserved: 0, cost, byProject: [{ id: 1, words: 500, cost }], byKey: [{ id: 7, words: 500, cost }] },
      { start: "2026-03-06T00:00:00.000Z", settled: 0, reserved: 300, cost: 0n, byProject: [{ id: 2, words: 300, cost: 0n }], byKey: [{ id: 0, words: 300, cost: 0n }] },
    ]);
    await expect(recordCost(db, early, "a lot")).rejects.toThrow("cost_usd");
    // 10:15 on the 5th is more than 48 hours before 12:30 on the 7th (the hours shown start at 13:00 on the 5th).
    expect(report.hours.map((h) => [h.start.toISOString(), h.reservedWords])).toEqual([["2026-03-06T23:00:00.000Z", 300]]);
  });
});
