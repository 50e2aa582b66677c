// Words taken per account and month are kept by triggers and folded (accounts-billing migration
// 0003) instead of summed on every reservation: what a reservation and GET usage read must equal a
// recount of the reservations whatever wrote them (the service, an operator's SQL), before and
// after folding, while reservations race the folder, and over reservations written before the
// migration. Runs on a real Postgres, in throwaway databases.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes, randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { openServiceDatabase } from "../../services/kit/src/db.ts";
import { openScratchDatabase, type ScratchDatabase } from "../harness/scratch-database.ts";
import { migrationsBefore } from "../harness/migrations-before.ts";
import { schema } from "../../services/accounts-billing/src/db/client.ts";
import * as identity from "../../services/accounts-billing/src/domain/identity.ts";
import * as quota from "../../services/accounts-billing/src/domain/word-quota.ts";

const MIGRATIONS = new URL("../../services/accounts-billing/src/db/migrations", import.meta.url);
let database: ScratchDatabase<typeof schema>;

beforeAll(async () => {
  database = await openScratchDatabase("word_usage", { schemaName: "accounts_billing", schema, migrationsFolder: MIGRATIONS });
});

afterAll(() => database?.drop());

async function accountWith(db: typeof database.db, monthlyWords: number): Promise<number> {
  const plan = await identity.createPlan(db, { name: "Plan", monthlyWords, requestsPerMinute: 1, requestsPerHour: 1, requestsPerDay: 1 });
  return (await identity.createAccount(db, "Account", plan.id)).id;
}

/** Each account and month's words as the reservations themselves add up, beside what words_taken reads. */
async function keptAndRecounted(sql: postgres.Sql) {
  const recounted = await sql`
    select account_id::int, period,
           coalesce(sum(words) filter (where state = 'settled'), 0)::int as settled,
           coalesce(sum(words) filter (where state = 'reserved'), 0)::int as reserved
    from accounts_billing.word_reservations group by 1, 2 order by 1, 2`;
  const kept = await sql`
    select k.account_id::int, k.period, t.settled_words::int as settled, t.reserved_words::int as reserved
    from (select distinct account_id, period from accounts_billing.word_reservations) k
    cross join lateral accounts_billing.words_taken(k.account_id, k.period) t order by 1, 2`;
  return { kept, recounted };
}

describe("word usage kept", () => {
  test("what reads take equals a recount of the reservations, before and after folding, whatever wrote them", async () => {
    const { db, sql } = database;
    const [a, b] = [await accountWith(db, 100_000), await accountWith(db, 100_000)];
    const march = new Date("2026-03-05T10:00:00Z");
    const refs = Array.from({ length: 6 }, () => randomUUID());
    for (const [i, ref] of refs.entries()) await quota.reserveWords(db, i % 2 ? a : b, ref, 100 * (i + 1), march);
    await quota.settleWords(db, refs[0]!, 50);
    await quota.settleWords(db, refs[1]!, 300);
    await quota.releaseWords(db, refs[2]!);
    // A released hold taken again in another month moves its words there.
    await quota.reserveWords(db, b, refs[2]!, 700, new Date("2026-04-01T00:00:00Z"));
    // Words settled after their hold was released still count.
    await quota.releaseWords(db, refs[3]!);
    await quota.settleWords(db, refs[3]!, 120);
    // An operator's SQL is counted too.
    await sql`update accounts_billing.word_reservations set words = 999 where reference = ${refs[4]!}`;
    await sql`delete from accounts_billing.word_reservations where reference = ${refs[5]!}`;

    const unfolded = await keptAndRecounted(sql);
    expect(unfolded.kept).toEqual(unfolded.recounted);
    expect(await quota.foldWordUsageChanges(db)).toBeGreaterThan(0);
    const [{ left }] = await sql`select count(*)::int as left from accounts_billing.word_usage_changes`;
    expect(left).toBe(0);
    const folded = await keptAndRecounted(sql);
    expect(folded.kept).toEqual(folded.recounted);
    expect(folded.kept).toEqual(unfolded.recounted);
    expect(await quota.getWordUsage(db, a, march)).toMatchObject({ usedWords: 300 + 120, reservedWords: 0, remainingWords: 100_000 - 420 });
    expect(await quota.getWordUsage(db, b, march)).toMatchObject({ usedWords: 50, reservedWords: 999, remainingWords: 100_000 - 50 - 999 });
    expect(await quota.getWordUsage(db, b, new Date("2026-04-02T00:00:00Z"))).toMatchObject({ usedWords: 0, reservedWords: 700 });
  });

  test("reservations racing the folder never pass beyond the allowance", async () => {
    const { db, sql } = database;
    const accountId = await accountWith(db, 10_000);
    let racing = true;
    const folder = (async () => {
      while (racing) await quota.foldWordUsageChanges(db);
    })();
    const answers = await Promise.allSettled(
      Array.from({ length: 60 }, async (_, i) => {
        await Bun.sleep(i % 10);
        const reference = randomUUID();
        const held = await quota.reserveWords(db, accountId, reference, 400);
        if (i % 3 === 0) await quota.settleWords(db, reference, 400);
        return held;
      }),
    );
    racing = false;
    await folder;
    expect(answers.filter((a) => a.status === "fulfilled")).toHaveLength(25);
    expect(await quota.getWordUsage(db, accountId)).toMatchObject({ remainingWords: 0 });
    const { kept, recounted } = await keptAndRecounted(sql);
    expect(kept).toEqual(recounted);
  });

  test("a backlog of several batches (one statement writing 25,000 reservations) folds in passes, exactly", async () => {
    const { db, sql } = database;
    const accountId = await accountWith(db, 1_000_000_000);
    // Changes the earlier tests left unfolded (the racing folder's last pass can end before the
    // last reservations) are folded first, so the passes below fold this backlog alone.
    while ((await quota.foldWordUsageChanges(db)) > 0);
    await sql`
      insert into accounts_billing.word_reservations (reference, account_id, period, words, state)
      select 'backlog-' || g, ${accountId}, '2026-05', g % 7, case when g % 3 = 0 then 'reserved' else 'settled' end from generate_series(1, 25000) g`;
    const passes: number[] = [];
    for (let folded = await quota.foldWordUsageChanges(db); folded > 0; folded = await quota.foldWordUsageChanges(db)) passes.push(folded);
    expect(passes.length).toBeGreaterThanOrEqual(3);
    // A reservation of no words changes nothing, so records nothing.
    expect(passes.reduce((a, b) => a + b, 0)).toBe(25_000 - Math.floor(25_000 / 7));
    const { kept, recounted } = await keptAndRecounted(sql);
    expect(kept).toEqual(recounted);
  });

  test("applied over reservations written before it, the usage counts them", async () => {
    const name = `word_usage_upgrade_${process.pid}_${randomBytes(3).toString("hex")}`;
    const url = Object.assign(new URL(process.env.TEST_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"), { pathname: `/${name}` }).toString();
    const before = migrationsBefore(fileURLToPath(MIGRATIONS), "0003_word_usage_kept");
    const open = (migrationsFolder: string) => openServiceDatabase({ databaseUrl: url, schemaName: "accounts_billing", schema, migrationsFolder, poolSize: 2 });
    try {
      const old = await open(before.folder);
      // Written in SQL of that schema: today's domain code writes columns later migrations add.
      const [{ id: planId }] = await old.sql`insert into accounts_billing.plans (name, monthly_words, requests_per_minute, requests_per_hour, requests_per_day) values ('Plan', 5000, 1, 1, 1) returning id`;
      const [account] = await old.sql`insert into accounts_billing.accounts (name) values ('Account') returning id`;
      const accountId = Number(account!.id);
      await old.sql`insert into accounts_billing.subscriptions (account_id, plan_id) values (${accountId}, ${planId})`;
      for (const [words, state] of [[400, "settled"], [300, "reserved"], [200, "released"], [100, "reserved"]] as const) {
        await old.sql`insert into accounts_billing.word_reservations (reference, account_id, period, words, state) values (${randomUUID()}, ${accountId}, '2026-03', ${words}, ${state})`;
      }
      await old.close();

      const upgraded = await open(fileURLToPath(MIGRATIONS));
      try {
        const march = new Date("2026-03-10T00:00:00Z");
        expect(await quota.getWordUsage(upgraded.db, accountId, march)).toMatchObject({ usedWords: 400, reservedWords: 400, remainingWords: 4_200 });
        await expect(quota.reserveWords(upgraded.db, accountId, randomUUID(), 4_300, march)).rejects.toMatchObject({ message: expect.stringContaining("4200 words remaining") });
        expect(await quota.reserveWords(upgraded.db, accountId, randomUUID(), 4_200, march)).toMatchObject({ remainingWords: 0 });
      } finally {
        await upgraded.close();
      }
    } finally {
      before.remove();
      const admin = postgres(process.env.TEST_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres", { max: 1, onnotice: () => {} });
      await admin.unsafe(`drop database if exists "${name}" with (force)`);
      await admin.end();
    }
  });
});
