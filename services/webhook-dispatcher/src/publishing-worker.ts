// The BullMQ side of publishing: consumes the `publishing` queue and turns each attempt's outcome
// into queue moves, as the delivery worker does for webhooks. One job per article and destination
// runs at a time (a lock in Redis, shared by every dispatcher replica): two requests racing to
// create the same post would both miss each other's marker. A job that finds the lock held, or
// whose attempt our own services cut short, waits without spending an attempt.
import { UnrecoverableError, Worker, type Job } from "bullmq";
import type { Logger } from "../../kit/src/logger.ts";
import { countWorkerJobs, watchQueueDepth } from "../../kit/src/metrics.ts";
import { jobLocks, openQueue, QUEUES, type PublishingJob } from "../../kit/src/queues.ts";
import { connectRedis, isCluster, queuePrefix, redisKey, type RedisConnection } from "../../kit/src/redis.ts";
import { withRequestId } from "../../kit/src/request-context.ts";
import { inJobSpan } from "../../kit/src/tracing.ts";
import { retryLater } from "./delivery-worker.ts";
import { attemptPublication, type PublishingContext, type PublishOutcome } from "./publishing/publish-article.ts";

const INTERRUPTED_FOR_AT_MOST_MS = 24 * 3_600_000;
// Longer than any attempt (uploads of five images and a post, each bounded at 60 s).
const LOCK_MS = 10 * 60_000;
const LOCKED_RETRY_MS = 2_000;

export interface PublishingWorkerOptions {
  context: PublishingContext;
  redisUrl: string;
  redisPrefix: string;
  concurrency: number;
  /** DISPATCHER_LOCK_MS (see jobLocks). */
  lockDurationMs: number;
  logger: Logger;
}

/** Holds the post of (article, destination) for one job; false when another job has it. A job run again after its worker died takes back its own. */
async function takeLock(redis: RedisConnection, key: string, owner: string): Promise<boolean> {
  const taken = await redis.eval(
    "if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') or redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end return 0",
    1, key, owner, LOCK_MS,
  );
  return taken === 1;
}

async function releaseLock(redis: RedisConnection, key: string, owner: string): Promise<void> {
  // Only its own: a lock that expired and was taken by another job stays.
  await redis.eval("if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0", 1, key, owner);
}

export function startPublishingWorker(opts: PublishingWorkerOptions): () => Promise<void> {
  const { context, logger } = opts;
  const connection = connectRedis(opts.redisUrl);
  const lockKey = (job: PublishingJob) => redisKey(opts.redisPrefix, "publishing-lock", `${job.externalId}.${job.destinationId}`);

  async function interrupted(job: Job<PublishingJob>, token: string | undefined, why: string, delayMs: number): Promise<never> {
    const interruptions = job.data.interruptions ?? 0;
    if (Date.now() - job.timestamp > INTERRUPTED_FOR_AT_MOST_MS) {
      logger.error("publication abandoned: it could not run for a day", { externalId: job.data.externalId, destinationId: job.data.destinationId, error: why });
      throw new UnrecoverableError(why);
    }
    await job.updateData({ ...job.data, interruptions: interruptions + 1 });
    return retryLater(job, token, delayMs);
  }

  async function publish(job: Job<PublishingJob>, token?: string): Promise<PublishOutcome> {
    const interruptions = job.data.interruptions ?? 0;
    const attempt = Math.max(1, job.attemptsStarted - interruptions);
    const fields = { externalId: job.data.externalId, destinationId: job.data.destinationId, attempt };
    const key = lockKey(job.data);
    const owner = job.id ?? "";
    if (!(await takeLock(connection, key, owner))) return interrupted(job, token, "another publication of this article to this destination is running", LOCKED_RETRY_MS);
    let outcome: PublishOutcome;
    try {
      outcome = await attemptPublication(context, job.data, attempt);
    } catch (error) {
      const message = `could not complete the attempt: ${(error as Error).message}`;
      const delayMs = Math.min(context.backoffMs[Math.min(interruptions, context.backoffMs.length - 1)] ?? 10_000, 60_000);
      logger.warn("publication attempt interrupted; trying again later", { ...fields, error: message, retryInMs: delayMs });
      await releaseLock(connection, key, owner);
      return interrupted(job, token, message, delayMs);
    }
    await releaseLock(connection, key, owner);
    switch (outcome.kind) {
      case "retry":
        logger.warn("publication attempt failed; retrying", { ...fields, error: outcome.error, retryInMs: outcome.delayMs });
        return retryLater(job, token, outcome.delayMs);
      case "failed":
        logger.warn("publication failed", { ...fields, reason: outcome.reason });
        throw new UnrecoverableError(outcome.reason);
      case "published":
        logger.info("article published", { ...fields, remoteId: outcome.post.remoteId, created: outcome.post.created });
        return outcome;
      case "not-published":
        logger.info("article not published", { ...fields, reason: outcome.reason });
        return outcome;
    }
  }

  const run = (job: Job<PublishingJob>, token?: string) =>
    withRequestId(job.data.requestId, () => inJobSpan("publication", job.data.trace, { "messaging.destination.name": QUEUES.publishing.name }, () => publish(job, token)));
  const worker = new Worker<PublishingJob, PublishOutcome>(QUEUES.publishing.name, run, {
    connection,
    prefix: queuePrefix(opts.redisPrefix, isCluster(connection)),
    concurrency: opts.concurrency,
    ...jobLocks(opts.lockDurationMs),
  });
  worker.on("error", (error) => logger.error("publishing worker error", { error }));
  countWorkerJobs(worker);
  const queue = openQueue<PublishingJob>("publishing", connection, opts.redisPrefix);
  watchQueueDepth(queue);

  return async () => {
    await worker.close();
    await queue.close();
    connection.disconnect();
  };
}
