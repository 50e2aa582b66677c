// Shared pieces of the article tests: the quota ledger as numbers, the generation queue in Redis,
// and article-store's own database and creation input for tests that call its domain code.
import { randomUUID } from "node:crypto";
import { Queue } from "bullmq";
import IORedis from "ioredis";
import { queuePrefix } from "../../services/kit/src/redis.ts";
import postgres from "postgres";
import { drizzle } from "drizzle-orm/postgres-js";
import { lifecycleClient, quotaClient } from "../harness/service-clients.ts";
import type { TestStack } from "../harness/stack.ts";
import type { Tenant } from "../harness/tenants.ts";
import { schema, type Db } from "../../services/article-store/src/db/client.ts";
import type { NewArticle } from "../../services/article-store/src/domain/articles.ts";

/** article-store's database as its code reaches it (close with `sql.end()`). */
export function articleStoreDatabase(stack: TestStack, max: number): { sql: postgres.Sql; db: Db } {
  const sql = postgres(stack.databaseUrl, { max, onnotice: () => {} });
  return { sql, db: drizzle(sql, { schema }) as unknown as Db };
}

/** What generation fixes at creation, for articles stored by a test. */
const STORED_SETTINGS: NewArticle["settings"] = {
  workflowId: 0,
  workflowRevision: 1,
  builtinWorkflow: true,
  model: "simulator:sim-fast",
  targetAudience: null,
  brandVoiceId: null,
  includeKeyTakeaways: false,
  includeFaq: false,
  headingCapitalization: null,
  researchEnabled: false,
  researchMaxSources: 5,
  researchMinContentWords: 100,
  researchMaxWordsPerSource: 1000,
  researchIncludeDomains: [],
  researchExcludeDomains: [],
  useBatchApi: false,
  additionalInstruction: null,
  imageCount: 0,
  imageAspectRatio: null,
  imagePresetId: null,
  reservedWords: 600,
};

/** A queued article of the tenant as article-store's creation takes it: plain defaults, `fields` and `settings` laid over them. */
export function storedArticle(tenant: Tenant, fields: Partial<NewArticle> = {}, settings: Partial<NewArticle["settings"]> = {}): NewArticle {
  return {
    externalId: randomUUID(),
    accountId: tenant.accountId,
    projectId: tenant.projectId,
    title: "Stored by article-store's own code",
    articleType: "blog_post",
    targetKeyword: null,
    keywords: [],
    targetWordCount: 500,
    tone: "casual",
    pointOfView: "third_person",
    language: "en",
    countryTargeting: null,
    humanize: false,
    additionalContext: null,
    webhookUrl: null,
    status: "queued",
    ...fields,
    settings: { ...STORED_SETTINGS, ...settings },
  };
}

/**
 * `articles` finished articles of an account's project filled straight into article-store's
 * database (creating thousands through the API would take minutes), times from `start`: five
 * share each time, four times a day, so pages cross ties, midnights and days. Statuses cycle
 * completed, completed, failed, published from the first (g = 1). Checked for originality, as
 * finished runs leave them, so the reconciler owes them nothing.
 */
export async function fillArchive(sql: postgres.Sql, accountId: number, projectId: number, articles: number, start: string): Promise<void> {
  const settings = { ...STORED_SETTINGS, workflowId: 1, reservedWords: 1200 };
  await sql`
    insert into article_store.articles (external_id, account_id, project_id, title, status, article_type, target_word_count, tone, point_of_view, language, settings, originality_checked_at, created_at)
    select gen_random_uuid(), ${accountId}, ${projectId}, 'Archived ' || g, (array['completed', 'completed', 'failed', 'published'])[1 + g % 4],
      'blog_post', 1000, 'friendly', 'second_person', 'en', ${sql.json(settings as postgres.JSONValue)}, now(), ${start}::timestamptz + (g / 5) * interval '6 hours'
    from generate_series(1, ${articles}) g`;
}

export async function wordUsage(stack: TestStack, accountId: number) {
  const u = await quotaClient(stack).getWordUsage({ accountId: BigInt(accountId) });
  return { used: Number(u.usedWords), reserved: Number(u.reservedWords), remaining: Number(u.remainingWords), monthly: Number(u.monthlyWords) };
}

/** The generation queue exactly as the stack names it (under queuePrefix(REDIS_PREFIX)). */
export function generationQueue(stack: TestStack) {
  const connection = new IORedis(stack.env.REDIS_URL ?? "redis://127.0.0.1:6379", { maxRetriesPerRequest: null });
  const queue = new Queue("generation", { connection, prefix: queuePrefix(stack.redisPrefix, false) });
  return {
    queue,
    async close() {
      await queue.close();
      connection.disconnect();
    },
  };
}

const PENDING = ["wait", "waiting", "prioritized", "delayed"] as const;

async function pendingJobIds(queue: Queue): Promise<Set<string>> {
  return new Set((await queue.getJobs([...PENDING])).map((j) => j.id!));
}

export interface GenerationHold {
  /**
   * Withdraws the jobs queued while held (their articles are failed, so none is left stranded
   * and no worker spends the end of the run generating test articles), then resumes the queue.
   */
  release(): Promise<void>;
}

/**
 * Article tests inspect articles as created, so the generation queue is paused while a file runs
 * (jobs wait, as they would with every worker busy).
 */
export async function holdGeneration(stack: TestStack): Promise<GenerationHold> {
  const { queue, close } = generationQueue(stack);
  await queue.pause();
  const before = await pendingJobIds(queue);
  await close();
  return {
    async release() {
      const { queue, close } = generationQueue(stack);
      try {
        const lifecycle = lifecycleClient(stack);
        for (const job of await queue.getJobs([...PENDING])) {
          if (before.has(job.id!)) continue;
          await lifecycle.failArticle({ externalId: job.data.externalId, reason: "The test that created it finished." }).catch(() => {});
          await job.remove();
        }
        await queue.resume();
      } finally {
        await close();
      }
    },
  };
}
