// Shared pieces of the article tests: the quota ledger as numbers and the generation queue in Redis.
import { Queue } from "bullmq";
import IORedis from "ioredis";
import { lifecycleClient, quotaClient } from "../harness/service-clients.ts";
import type { TestStack } from "../harness/stack.ts";

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
