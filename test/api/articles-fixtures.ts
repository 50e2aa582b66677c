// Shared pieces of the article tests: a valid creation body, the service contracts the tests
// inspect (quota, article store and lifecycle over gRPC) and the generation queue in Redis.
import { Queue } from "bullmq";
import IORedis from "ioredis";
import { ArticleLifecycleService, ArticleStoreService } from "../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { QuotaService } from "../../proto/gen/articles/accounts_billing/v1/quota_pb.ts";
import { serviceClient } from "../../services/kit/src/clients.ts";
import type { TestStack } from "../harness/stack.ts";

export function articleBody(projectId: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    project_id: projectId,
    title: "How to brew pour-over coffee",
    article_type: "blog_post",
    target_word_count: 1000,
    tone: "friendly",
    point_of_view: "second_person",
    language: "en",
    ...overrides,
  };
}

const via = (stack: TestStack, url: string) => ({ baseUrl: url, serviceToken: stack.env.SERVICE_TOKEN });

export const quotaClient = (stack: TestStack) => serviceClient(QuotaService, via(stack, stack.env.ACCOUNTS_BILLING_URL));
export const storeClient = (stack: TestStack) => serviceClient(ArticleStoreService, via(stack, stack.env.ARTICLE_STORE_URL));
export const lifecycleClient = (stack: TestStack) => serviceClient(ArticleLifecycleService, via(stack, stack.env.ARTICLE_STORE_URL));

export async function wordUsage(stack: TestStack, accountId: number) {
  const u = await quotaClient(stack).getWordUsage({ accountId: BigInt(accountId) });
  return { used: Number(u.usedWords), reserved: Number(u.reservedWords), remaining: Number(u.remainingWords), monthly: Number(u.monthlyWords) };
}

/** The generation queue exactly as the stack names it (REDIS_PREFIX:bull:generation). */
export function generationQueue(stack: TestStack) {
  const connection = new IORedis(stack.env.REDIS_URL ?? "redis://127.0.0.1:6379", { maxRetriesPerRequest: null });
  const queue = new Queue("generation", { connection, prefix: `${stack.redisPrefix}:bull` });
  return {
    queue,
    async close() {
      await queue.close();
      connection.disconnect();
    },
  };
}

/** Waits until `check` holds (polling), or fails with what it last saw. */
export async function eventually<T>(probe: () => Promise<T>, check: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: T = await probe();
  while (!check(last)) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms; last value: ${JSON.stringify(last, (_k, v) => (typeof v === "bigint" ? String(v) : v))}`);
    await Bun.sleep(50);
    last = await probe();
  }
  return last;
}

const PENDING = ["paused", "wait", "waiting", "prioritized", "delayed"] as const;

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
