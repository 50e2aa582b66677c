// Never stranded (issue item 6): an article stored with its outbox row gets its generation job
// even when article-store dies before relaying it, and a relay that dies after enqueueing but
// before marking the row sent enqueues nothing twice. The crash is real: the article-store
// process is killed, and the state it leaves (article + unsent outbox row, committed) is written
// with article-store's own creation code, as its last act would have.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { eq } from "drizzle-orm";
import { useStack, type TestStack } from "../harness/stack.ts";
import { apiClient } from "../harness/http.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { schema, type Db } from "../../services/article-store/src/db/client.ts";
import { createArticle } from "../../services/article-store/src/domain/articles.ts";
import { eventually } from "../harness/eventually.ts";
import { articleStoreDatabase, generationQueue, holdGeneration, storedArticle, type GenerationHold } from "./articles-fixtures.ts";

let stack: TestStack;
let hold: GenerationHold;
let tenant: Tenant;
let sql: postgres.Sql;
let db: Db;

beforeAll(async () => {
  stack = await useStack();
  hold = await holdGeneration(stack);
  tenant = await createTenant(stack);
  ({ sql, db } = articleStoreDatabase(stack, 2));
});

afterAll(async () => {
  if (stack.processes.get("articleStore")?.exitCode !== null) await stack.start("articleStore");
  await sql.end();
  await hold.release();
});

const articleWrittenBeforeTheCrash = () => storedArticle(tenant, { title: "Written just before the crash" });

const outboxRow = async (externalId: string) => (await db.select().from(schema.outbox).where(eq(schema.outbox.externalId, externalId)))[0];

describe("generation outbox", () => {
  test("an article committed but not relayed before a crash is enqueued after restart", async () => {
    const { queue, close } = generationQueue(stack);
    try {
      await stack.kill("articleStore");
      const { article } = await createArticle(db, articleWrittenBeforeTheCrash());
      await Bun.sleep(300);
      expect(await queue.getJob(article.externalId)).toBeUndefined();
      expect((await outboxRow(article.externalId)).sentAt).toBeNull();

      await stack.start("articleStore");
      const job = await eventually(
        () => queue.getJob(article.externalId),
        (j) => j !== undefined,
      );
      expect(job!.data).toEqual({ externalId: article.externalId });
      await eventually(
        () => outboxRow(article.externalId),
        (row) => row.sentAt !== null,
      );

      const res = await apiClient(stack.baseUrl, tenant.token).get(`/v1/articles/${article.externalId}`);
      expect(res.status).toBe(200);
      expect(res.body.data.status).toBe("queued");
    } finally {
      await close();
    }
  });

  test("a relay that crashed after enqueueing sends again harmlessly: still one job", async () => {
    const { queue, close } = generationQueue(stack);
    try {
      await stack.kill("articleStore");
      const { article } = await createArticle(db, articleWrittenBeforeTheCrash());
      // The enqueue the crashed relay had already made, with the catalog's job id.
      const before = await queue.add("generate", { externalId: article.externalId }, { jobId: article.externalId });

      await stack.start("articleStore");
      await eventually(
        () => outboxRow(article.externalId),
        (row) => row.sentAt !== null,
      );
      const job = await queue.getJob(article.externalId);
      expect(job!.timestamp).toBe(before.timestamp);
      const counts = await queue.getJobCounts("waiting", "prioritized", "delayed", "active");
      const jobs = await queue.getJobs(["waiting", "prioritized", "delayed", "active"], 0, Object.values(counts).reduce((a, b) => a + b, 0));
      expect(jobs.filter((j) => j.data.externalId === article.externalId).length).toBe(1);
    } finally {
      await close();
    }
  });
});
