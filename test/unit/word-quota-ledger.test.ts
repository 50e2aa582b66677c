// The word ledger's own rules, below the API: a reservation is one call of reserve_words (migration
// 0001), several asked at once share one statement, so its retries, its re-use of a released hold,
// its lock under concurrency and the sharing are checked here directly. Runs on a real Postgres, in a throwaway database.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { openScratchDatabase, type ScratchDatabase } from "../harness/scratch-database.ts";
import { schema } from "../../services/accounts-billing/src/db/client.ts";
import * as identity from "../../services/accounts-billing/src/domain/identity.ts";
import * as quota from "../../services/accounts-billing/src/domain/word-quota.ts";

let database: ScratchDatabase<typeof schema>;

beforeAll(async () => {
  database = await openScratchDatabase("word_quota", { schemaName: "accounts_billing", schema, migrationsFolder: new URL("../../services/accounts-billing/src/db/migrations", import.meta.url) });
});

afterAll(() => database?.drop());

async function accountWith(monthlyWords: number | null): Promise<number> {
  const db = database.db;
  if (monthlyWords === null) return (await identity.createAccount(db, "No plan")).id;
  const plan = await identity.createPlan(db, { name: "Plan", monthlyWords, requestsPerMinute: 1, requestsPerHour: 1, requestsPerDay: 1 });
  return (await identity.createAccount(db, "Account", plan.id)).id;
}

describe("word reservations", () => {
  test("a retry returns the held reservation; a released one is taken again at the new size", async () => {
    const db = database.db;
    const accountId = await accountWith(1000);
    const reference = randomUUID();
    const first = await quota.reserveWords(db, accountId, reference, 600, new Date("2026-03-05T10:00:00Z"));
    expect(first).toMatchObject({ reservation: { reference, accountId, period: "2026-03", words: 600, state: "reserved" }, remainingWords: 400 });
    expect(first.reservation.createdAt).toBeInstanceOf(Date);

    expect(await quota.reserveWords(db, accountId, reference, 600, new Date("2026-03-05T10:00:01Z"))).toMatchObject({ reservation: { words: 600, state: "reserved" }, remainingWords: 400 });
    expect(await quota.releaseWords(db, reference)).toMatchObject({ state: "released" });
    expect(await quota.releaseWords(db, reference)).toMatchObject({ state: "released" });

    const again = await quota.reserveWords(db, accountId, reference, 700, new Date("2026-03-05T10:00:02Z"));
    expect(again).toMatchObject({ reservation: { words: 700, state: "reserved" }, remainingWords: 300 });
    expect(again.reservation.updatedAt.toISOString()).toBe("2026-03-05T10:00:02.000Z");
  });

  test("a shortfall is refused with the words remaining; an unknown account is not found", async () => {
    const db = database.db;
    const accountId = await accountWith(1000);
    await quota.reserveWords(db, accountId, randomUUID(), 600);
    await expect(quota.reserveWords(db, accountId, randomUUID(), 600)).rejects.toMatchObject({ message: expect.stringContaining("400 words remaining, 600 required") });
    await expect(quota.reserveWords(db, await accountWith(null), randomUUID(), 1)).rejects.toMatchObject({ message: expect.stringContaining("0 words remaining") });
    await expect(quota.reserveWords(db, 999_999_999, randomUUID(), 1)).rejects.toMatchObject({ message: "No such account." });
  });

  test("settling counts the actual words once; a retry changes nothing", async () => {
    const db = database.db;
    const accountId = await accountWith(1000);
    const reference = randomUUID();
    await quota.reserveWords(db, accountId, reference, 600);
    expect(await quota.settleWords(db, reference, 650.4)).toMatchObject({ state: "settled", words: 650 });
    expect(await quota.settleWords(db, reference, 10)).toMatchObject({ state: "settled", words: 650 });
    expect(await quota.getWordUsage(db, accountId)).toMatchObject({ usedWords: 650, reservedWords: 0, remainingWords: 350 });
    await expect(quota.settleWords(db, randomUUID(), 1)).rejects.toMatchObject({ message: "No such reservation." });
  });

  test("concurrent reservations never pass beyond the allowance", async () => {
    const db = database.db;
    const accountId = await accountWith(1000);
    const answers = await Promise.allSettled(Array.from({ length: 8 }, () => quota.reserveWords(db, accountId, randomUUID(), 400)));
    expect(answers.filter((a) => a.status === "fulfilled")).toHaveLength(2);
    expect(await quota.getWordUsage(db, accountId)).toMatchObject({ reservedWords: 800, remainingWords: 200 });
  });

  test("reservations asked at once each get their own answer: accounts interleaved, a repeated reference, a refusal, an unknown account", async () => {
    const db = database.db;
    const [a, b] = [await accountWith(1000), await accountWith(500)];
    const repeated = randomUUID();
    const answers = await Promise.allSettled([
      quota.reserveWords(db, b, randomUUID(), 300),
      quota.reserveWords(db, a, repeated, 400),
      quota.reserveWords(db, b, randomUUID(), 300),
      quota.reserveWords(db, a, repeated, 400),
      quota.reserveWords(db, 999_999_999, randomUUID(), 1),
      quota.reserveWords(db, a, randomUUID(), 500),
    ]);
    const outcome = (i: number) => answers[i]!.status === "fulfilled" ? (answers[i] as PromiseFulfilledResult<{ remainingWords: number }>).value.remainingWords : (answers[i] as PromiseRejectedResult).reason.message;
    // In arrival order within an account: b's second does not fit, a's repeat returns the first hold.
    expect(outcome(0)).toBe(200);
    expect(outcome(1)).toBe(600);
    expect(outcome(2)).toContain("200 words remaining, 300 required");
    expect(outcome(3)).toBe(600);
    expect(outcome(4)).toBe("No such account.");
    expect(outcome(5)).toBe(100);
    expect(await quota.getWordUsage(db, a)).toMatchObject({ reservedWords: 900, remainingWords: 100 });
    expect(await quota.getWordUsage(db, b)).toMatchObject({ reservedWords: 300, remainingWords: 200 });
  });

  test("an ask the database refuses fails alone; the others asked with it are held", async () => {
    const db = database.db;
    const accountId = await accountWith(1000);
    const answers = await Promise.allSettled([
      quota.reserveWords(db, accountId, randomUUID(), 100),
      quota.reserveWords(db, accountId, randomUUID(), 2 ** 63), // beyond int8: the shared statement fails
      quota.reserveWords(db, accountId, randomUUID(), 200),
    ]);
    expect(answers.map((a) => a.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(await quota.getWordUsage(db, accountId)).toMatchObject({ reservedWords: 300, remainingWords: 700 });
  });

  test("settlements asked at once each get their own answer: a repeated reference keeps its first words, a retry and an unknown reference as alone", async () => {
    const db = database.db;
    const accountId = await accountWith(5000);
    const [first, second, done] = [randomUUID(), randomUUID(), randomUUID()];
    for (const reference of [first, second, done]) await quota.reserveWords(db, accountId, reference, 1000);
    await quota.settleWords(db, done, 300);
    const answers = await Promise.allSettled([
      quota.settleWords(db, first, 700),
      quota.settleWords(db, second, 800),
      quota.settleWords(db, first, 10),
      quota.settleWords(db, done, 999),
      quota.settleWords(db, randomUUID(), 1),
    ]);
    const outcome = (i: number) => (answers[i]!.status === "fulfilled" ? (answers[i] as PromiseFulfilledResult<{ words: number; state: string }>).value : (answers[i] as PromiseRejectedResult).reason.message);
    expect(outcome(0)).toMatchObject({ state: "settled", words: 700 });
    expect(outcome(1)).toMatchObject({ state: "settled", words: 800 });
    expect(outcome(2)).toMatchObject({ state: "settled", words: 700 });
    expect(outcome(3)).toMatchObject({ state: "settled", words: 300 });
    expect(outcome(4)).toBe("No such reservation.");
    expect(await quota.getWordUsage(db, accountId)).toMatchObject({ usedWords: 1800, reservedWords: 0, remainingWords: 3200 });
  });

  test("a settlement the database refuses fails alone; the others settled with it count", async () => {
    const db = database.db;
    const accountId = await accountWith(5000);
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    for (const reference of [a, b, c]) await quota.reserveWords(db, accountId, reference, 1000);
    const answers = await Promise.allSettled([quota.settleWords(db, a, 100), quota.settleWords(db, b, 2 ** 63), quota.settleWords(db, c, 200)]);
    expect(answers.map((x) => x.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    expect(await quota.getWordUsage(db, accountId)).toMatchObject({ usedWords: 300, reservedWords: 1000 });
  });
});
