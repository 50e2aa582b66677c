// The outbox relay under a burst of creations: every created article gets its generation job,
// and passes are paced, so far fewer passes (transactions and Redis round trips) go out than
// articles. Runs article-store's relay on a real Postgres, in a throwaway database, with a
// queue that records what it is given.
import { afterAll, describe, expect, test } from "bun:test";
import { randomBytes, randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import type { Queue } from "bullmq";
import { openServiceDatabase } from "../../services/kit/src/db.ts";
import { createLogger } from "../../services/kit/src/logger.ts";
import type { GenerationJob } from "../../services/kit/src/queues.ts";
import { schema } from "../../services/article-store/src/db/client.ts";
import { createArticle } from "../../services/article-store/src/domain/articles.ts";
import { startOutboxRelay } from "../../services/article-store/src/outbox-relay.ts";
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

describe("outbox relay", () => {
  test("a burst of creations is relayed in paced passes, every article at least once", async () => {
    const database = await openServiceDatabase({
      databaseUrl: url,
      schemaName: "article_store",
      schema,
      migrationsFolder: fileURLToPath(new URL("../../services/article-store/src/db/migrations", import.meta.url)),
      poolSize: 8,
    });
    const passes: string[][] = [];
    const generationQueue = {
      async addBulk(jobs: { data: GenerationJob }[]) {
        passes.push(jobs.map((job) => job.data.externalId));
        return [];
      },
    } as unknown as Queue<GenerationJob>;
    const relay = startOutboxRelay({ db: database.db, generationQueue, logger: createLogger("outbox-relay-test") });
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
      const [{ unsent }] = await database.sql`select count(*)::int as unsent from article_store.outbox where sent_at is null`;
      expect(unsent).toBe(0);
      // At most one pass per 20 ms (and the first): unpaced, a pass went out about per creation.
      expect(passes.length).toBeLessThanOrEqual(Math.ceil(elapsed / 20) + 1);
    } finally {
      await relay.stop();
      await database.close();
    }
  });
});
