// The outbox relay under a burst of creations: every created article gets its generation job,
// and passes are paced, so far fewer passes (transactions and Redis round trips) go out than
// articles; rows sent long enough ago are pruned, unsent ones never. Runs article-store's relay
// on a real Postgres, in a throwaway database, with a dispatch that records what it is given.
import { afterAll, describe, expect, test } from "bun:test";
import { randomBytes, randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { openServiceDatabase } from "../../services/kit/src/db.ts";
import { createLogger } from "../../services/kit/src/logger.ts";
import type { FairDispatch, LineEntry } from "../../services/kit/src/fair-dispatch.ts";
import { schema } from "../../services/article-store/src/db/client.ts";
import { createArticle } from "../../services/article-store/src/domain/articles.ts";
import { startOutboxRelay } from "../../services/article-store/src/outbox-relay.ts";
import { pruneSentEntries, SENT_KEPT_MS } from "../../services/article-store/src/domain/outbox.ts";
import { storedArticle } from "../api/articles-fixtures.ts";
import { eventually } from "../harness/eventually.ts";

const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const name = `outbox_pacing_${process.pid}_${randomBytes(3).toString("hex")}`;
const url = Object.assign(new URL(ADMIN_URL), { pathname: `/${name}` }).toString();

afterAll(async () => {
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists "${name}" with (force)`);
  await admin.end();
});

const openDatabase = () =>
  openServiceDatabase({
    databaseUrl: url,
    schemaName: "article_store",
    schema,
    migrationsFolder: fileURLToPath(new URL("../../services/article-store/src/db/migrations", import.meta.url)),
    poolSize: 8,
  });

/** The relay's pacing in this test: at most one pass per this long while creations keep coming. */
const PACED_MS = 250;

describe("outbox relay", () => {
  test("a burst of creations is relayed in paced passes, every article at least once", async () => {
    const database = await openDatabase();
    const passes: string[][] = [];
    const accounts = new Set<string>();
    const dispatch = {
      async enqueue(entries: LineEntry[]) {
        passes.push(entries.map((entry) => entry.data.externalId));
        for (const entry of entries) accounts.add(entry.account);
      },
    } as unknown as FairDispatch;
    // Paced at a longer interval than the service's 20 ms, so the bound below stays far from what an
    // unpaced relay does (a pass per creation) however slowly a loaded machine creates.
    const relay = startOutboxRelay({ db: database.db, dispatch, logger: createLogger("outbox-relay-test"), minPassIntervalMs: PACED_MS });
    try {
      const tenant = { accountId: 1, projectId: 1 } as Parameters<typeof storedArticle>[0];
      const created: string[] = [];
      const started = performance.now();
      // 8 creating side by side, each waking the relay as CreateArticle does.
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          for (let i = 0; i < 10; i++) {
            const { article } = await createArticle(database.db, storedArticle(tenant, { externalId: randomUUID() }));
            created.push(article.externalId);
            relay.wake();
          }
        }),
      );
      const relayed = () => new Set(passes.flat());
      await eventually(async () => relayed().size, (n) => n === created.length, 5_000, "every creation to be relayed");
      const elapsed = performance.now() - started;
      expect([...relayed()].sort()).toEqual([...created].sort());
      // Each job goes into its article's account's line.
      expect([...accounts]).toEqual(["1"]);
      // The relay marks a pass's rows sent once the dispatch took them: a moment after the last enqueue.
      const unsent = async () => (await database.sql`select count(*)::int as unsent from article_store.outbox where sent_at is null`)[0]!.unsent as number;
      expect(await eventually(unsent, (n) => n === 0, 5_000, "every relayed row marked sent")).toBe(0);
      // At most one pass per interval (and the first), so far fewer passes than creations: unpaced,
      // a pass went out about per creation. A pass carries many: counted, not timed.
      expect(passes.length).toBeLessThanOrEqual(Math.ceil(elapsed / PACED_MS) + 1);
      expect(passes.length).toBeLessThanOrEqual(created.length / 4);
      expect(Math.max(...passes.map((pass) => pass.length))).toBeGreaterThan(4);
    } finally {
      await relay.stop();
      await database.close();
    }
  });

  test("rows sent more than SENT_KEPT_MS ago are pruned, in batches; recent and unsent rows stay", async () => {
    const database = await openDatabase();
    try {
      const tenant = { accountId: 2, projectId: 2 } as Parameters<typeof storedArticle>[0];
      const ids: Record<"old" | "recent" | "unsent", string[]> = { old: [], recent: [], unsent: [] };
      for (const kind of ["old", "recent", "unsent"] as const) {
        for (let i = 0; i < 5; i++) ids[kind].push((await createArticle(database.db, storedArticle(tenant, { externalId: randomUUID() }))).article.externalId);
      }
      const sentAgo = (externalIds: string[], ms: number) =>
        database.sql`update article_store.outbox set sent_at = now() - make_interval(secs => ${ms / 1000}) where external_id in ${database.sql(externalIds)}`;
      await sentAgo(ids.old, SENT_KEPT_MS + 60_000);
      await sentAgo(ids.recent, SENT_KEPT_MS - 60_000);
      // Old rows for three batches of 1,000, so the batches are seen to go on until none is left.
      await database.sql`
        insert into article_store.outbox (article_id, external_id, queue, sent_at)
        select a.id, a.external_id, 'generation', now() - interval '2 days'
        from article_store.articles a, generate_series(1, 2500) where a.external_id = ${ids.old[0]!}`;
      const rows = async () =>
        Object.fromEntries(
          (await database.sql`select external_id::text as id from article_store.outbox where external_id in ${database.sql([...ids.old, ...ids.recent, ...ids.unsent])}`).map((r) => [r.id, true]),
        );
      expect(await pruneSentEntries(database.db, SENT_KEPT_MS, 1_000)).toBe(2505);
      const left = await rows();
      for (const id of ids.old) expect(left[id]).toBeUndefined();
      for (const id of [...ids.recent, ...ids.unsent]) expect(left[id]).toBe(true);
      // The articles themselves are untouched.
      const [{ articles }] = await database.sql`select count(*)::int as articles from article_store.articles where project_id = 2`;
      expect(articles).toBe(15);
      expect(await pruneSentEntries(database.db)).toBe(0);
    } finally {
      await database.close();
    }
  });
});
