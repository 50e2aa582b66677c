// QuotaService.ListHeldReservations below the API: the references of reservations still held and
// taken longer ago than the asked age, in reference order a page at a time, read through the
// partial index word_reservations_held (migration 0006) even as a generic plan. Runs on a real
// Postgres, in a throwaway database.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { inArray, sql } from "drizzle-orm";
import { openScratchDatabase, type ScratchDatabase } from "../harness/scratch-database.ts";
import { openServiceDatabase } from "../../services/kit/src/db.ts";
import { schema } from "../../services/accounts-billing/src/db/client.ts";
import { wordReservations } from "../../services/accounts-billing/src/db/schema.ts";
import * as identity from "../../services/accounts-billing/src/domain/identity.ts";
import * as quota from "../../services/accounts-billing/src/domain/word-quota.ts";

let database: ScratchDatabase<typeof schema>;
let accountId: number;

const MINUTE = 60_000;

beforeAll(async () => {
  database = await openScratchDatabase("held_reservations", {
    schemaName: "accounts_billing",
    schema,
    migrationsFolder: new URL("../../services/accounts-billing/src/db/migrations", import.meta.url),
  });
  const plan = await identity.createPlan(database.db, { name: "Plan", monthlyWords: 1_000_000_000, requestsPerMinute: 1, requestsPerHour: 1, requestsPerDay: 1 });
  accountId = (await identity.createAccount(database.db, "Account", plan.id)).id;
});

afterAll(() => database?.drop());

/** Moves the reservations' reservation time `ms` into the past. */
async function backdate(references: string[], ms: number) {
  await database.db
    .update(wordReservations)
    .set({ updatedAt: sql`now() - ${ms}::float8 * interval '1 millisecond'` })
    .where(inArray(wordReservations.reference, references));
}

/** Every page of the walk, `limit` at a time. */
async function walk(heldLongerThanMs: number, limit: number): Promise<string[][]> {
  const pages: string[][] = [];
  let afterReference = "";
  for (;;) {
    const page = await quota.listHeldReservations(database.db, { heldLongerThanMs, limit, afterReference });
    pages.push(page);
    if (page.length < limit) return pages;
    afterReference = page[page.length - 1]!;
  }
}

describe("held reservations", () => {
  test("only held ones reserved longer ago than the age: not settled, released, or recent; a released one taken again counts from then", async () => {
    const db = database.db;
    const [oldHeld, recentHeld, settled, released, takenAgain] = Array.from({ length: 5 }, (): string => randomUUID());
    for (const reference of [oldHeld, recentHeld, settled, released, takenAgain]) await quota.reserveWords(db, accountId, reference, 100);
    await quota.settleWords(db, settled, 90);
    await quota.releaseWords(db, released);
    await quota.releaseWords(db, takenAgain);
    await backdate([oldHeld, settled, released, takenAgain], 10 * MINUTE);
    await quota.reserveWords(db, accountId, takenAgain, 100);

    const mine = new Set([oldHeld, recentHeld, settled, released, takenAgain]);
    const listed = async (heldLongerThanMs: number) =>
      (await quota.listHeldReservations(db, { heldLongerThanMs, limit: 1000, afterReference: "" })).filter((r) => mine.has(r));
    expect(await listed(5 * MINUTE)).toEqual([oldHeld]);
    expect(await listed(0)).toEqual([oldHeld, recentHeld, takenAgain].sort());

    // Released by the sweep: no longer listed.
    await quota.releaseWords(db, oldHeld);
    expect(await listed(5 * MINUTE)).toEqual([]);
  });

  test("pages in reference order, each after the last reference of the one before, none twice", async () => {
    const references = Array.from({ length: 7 }, (): string => randomUUID());
    for (const reference of references) await quota.reserveWords(database.db, accountId, reference, 10);
    await backdate(references, 20 * MINUTE);

    const pages = await walk(15 * MINUTE, 3);
    const all = pages.flat();
    expect(pages.slice(0, -1).every((p) => p.length === 3)).toBe(true);
    expect(new Set(all).size).toBe(all.length);
    expect(all).toEqual([...all].sort());
    expect(all.filter((r) => references.includes(r))).toEqual([...references].sort());
  });

  test("a negative age or a limit out of range is refused; limit 0 means the default page", async () => {
    const db = database.db;
    await expect(quota.listHeldReservations(db, { heldLongerThanMs: -1, limit: 10, afterReference: "" })).rejects.toMatchObject({ fields: { held_longer_than_ms: expect.any(Array) } });
    await expect(quota.listHeldReservations(db, { heldLongerThanMs: 0, limit: quota.HELD_PAGE_MAX + 1, afterReference: "" })).rejects.toMatchObject({ fields: { limit: expect.any(Array) } });
    await expect(quota.listHeldReservations(db, { heldLongerThanMs: 0, limit: -1, afterReference: "" })).rejects.toMatchObject({ fields: { limit: expect.any(Array) } });

    const references = Array.from({ length: quota.HELD_PAGE_DEFAULT + 5 }, (): string => randomUUID());
    for (const reference of references) await quota.reserveWords(db, accountId, reference, 1);
    expect(await quota.listHeldReservations(db, { heldLongerThanMs: 0, limit: 0, afterReference: "" })).toHaveLength(quota.HELD_PAGE_DEFAULT);
  });

  test("the statement the code sends reads the partial index of held reservations, also as a generic plan", async () => {
    // A ledger of mostly finished reservations, as in production.
    await database.sql`insert into accounts_billing.word_reservations (reference, account_id, period, words, state)
      select gen_random_uuid()::text, ${accountId}, '2026-01', 100, case when i % 2 = 0 then 'settled' else 'released' end
      from generate_series(1, 20000) as i`;
    await database.sql`analyze accounts_billing.word_reservations`;

    // A handle of one connection on the same database, so the statement the code prepares is
    // there to read; every plan on it generic, so the parameters' values cannot help the planner.
    const url = new URL(process.env.TEST_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
    url.pathname = `/${(await database.sql<{ name: string }[]>`select current_database() as name`)[0]!.name}`;
    const single = await openServiceDatabase({ databaseUrl: url.toString(), schemaName: "accounts_billing", schema, migrationsFolder: "/nonexistent", poolSize: 1 });
    try {
      const raw = single.sql;
      await raw`set plan_cache_mode = force_generic_plan`;
      await quota.listHeldReservations(single.db, { heldLongerThanMs: MINUTE, limit: 100, afterReference: "" });
      const [statement] = await raw<{ name: string; statement: string }[]>`
      select name, statement from pg_prepared_statements where statement like ${'%"updated_at" < now() -%'}`;
      expect(statement).toBeDefined();
      // postgres.js names its statements at random (a name may start with a digit): quoted as an identifier.
      const [{ "QUERY PLAN": plan }] = await raw.unsafe(`explain (format json) execute "${statement!.name.replace(/"/g, '""')}"('', 60000, 100)`);
      const text = JSON.stringify(plan);
      expect(text).toContain('"Index Name":"word_reservations_held"');
      expect(text).not.toContain("Seq Scan");
      expect(text).not.toContain('"Node Type":"Sort"');
    } finally {
      await single.close();
    }
  });
});
