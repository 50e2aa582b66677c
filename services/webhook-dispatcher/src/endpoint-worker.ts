// The BullMQ side of the project webhook endpoints: the `endpoint-events` queue fans each event
// out to the endpoints that subscribe (a delivery each, then a job each), and the
// `endpoint-deliveries` queue runs their attempts, a failed one moved to the delayed set for the
// scheduled wait (WEBHOOK_ATTEMPTS, WEBHOOK_BACKOFF_MS, as the completion webhook). A job that
// dies mid-way runs again (BullMQ's stalled-job check): deliveries are at least once. These
// queues are apart from `webhooks`, so endpoint traffic never waits in line with the spec's.
import { UnrecoverableError, Worker, type Job, type Queue } from "bullmq";
import type { Logger } from "../../kit/src/logger.ts";
import { countWorkerJobs, watchQueueDepth } from "../../kit/src/metrics.ts";
import { openQueue, QUEUES, type EndpointDeliveryJob, type EndpointEventJob } from "../../kit/src/queues.ts";
import { connectRedis, isCluster, queuePrefix, type RedisConnection } from "../../kit/src/redis.ts";
import { endpointProjectsKey } from "../../kit/src/endpoint-events.ts";
import type { Db } from "./db/client.ts";
import { retryLater } from "./delivery-worker.ts";
import { attemptEndpointDelivery, fanOutEvent, type EndpointPolicy } from "./domain/endpoint-deliveries.ts";
import { projectHasEndpoints, projectsWithEndpoints } from "./domain/endpoints.ts";

const INTERRUPTED_FOR_AT_MOST_MS = 24 * 3_600_000;
const NOTE_AGAIN_MS = 60_000;

/** Queues one attempt of a delivery; a redelivery gets a job of its own beside any still running. */
export async function queueDelivery(queue: Queue<EndpointDeliveryJob>, deliveryId: number, redelivery = false): Promise<void> {
  await queue.add("deliver", { deliveryId, ...(redelivery ? { redelivery } : {}) }, { jobId: redelivery ? `d${deliveryId}-r${Date.now()}` : `d${deliveryId}` });
}

/** Keeps the project in, or out of, the Redis set producers ask before handing an article event over. */
export async function noteEndpointProject(db: Db, redis: RedisConnection, redisPrefix: string, projectId: number): Promise<void> {
  if (await projectHasEndpoints(db, projectId)) await redis.sadd(endpointProjectsKey(redisPrefix), String(projectId));
  else await redis.srem(endpointProjectsKey(redisPrefix), String(projectId));
}

export interface EndpointWorkerOptions {
  db: Db;
  policy: EndpointPolicy;
  redisUrl: string;
  redisPrefix: string;
  concurrency: number;
  logger: Logger;
}

export function startEndpointWorkers(opts: EndpointWorkerOptions): () => Promise<void> {
  const { db, policy, logger } = opts;
  const connection = connectRedis(opts.redisUrl);
  const prefix = queuePrefix(opts.redisPrefix, isCluster(connection));
  const deliveries = openQueue<EndpointDeliveryJob>("endpoint-deliveries", connection, opts.redisPrefix);

  // The set may have been lost with Redis's data, or a change may not have reached it: every
  // project with an endpoint is put back at start and every NOTE_AGAIN_MS (never taken out here,
  // so replicas agree; a change takes its project out).
  const noteAll = () =>
    projectsWithEndpoints(db)
      .then((ids) => (ids.length ? connection.sadd(endpointProjectsKey(opts.redisPrefix), ...ids.map(String)) : 0))
      .catch((error) => logger.warn("could not note the projects with webhook endpoints", { error: (error as Error).message }));
  void noteAll();
  const noting = setInterval(noteAll, NOTE_AGAIN_MS);

  const fanOut = new Worker<EndpointEventJob>(
    QUEUES["endpoint-events"].name,
    async (job) => {
      const ids = await fanOutEvent(db, job.data);
      await Promise.all(ids.map((id) => queueDelivery(deliveries, id)));
      return ids.length;
    },
    { connection, prefix, concurrency: 20 },
  );

  const deliver = new Worker<EndpointDeliveryJob>(
    QUEUES["endpoint-deliveries"].name,
    async (job: Job<EndpointDeliveryJob>, token?: string) => {
      const redelivery = job.data.redelivery ?? false;
      const attempt = redelivery ? 1 : Math.max(1, job.attemptsStarted - (job.data.interruptions ?? 0));
      let outcome;
      try {
        outcome = await attemptEndpointDelivery(db, policy, job.data.deliveryId, attempt, redelivery);
      } catch (error) {
        // The database failed us (before or after the POST): tried again later, for a day at most, without spending an attempt.
        if (Date.now() - job.timestamp > INTERRUPTED_FOR_AT_MOST_MS) throw new UnrecoverableError((error as Error).message);
        logger.warn("endpoint delivery interrupted; trying again later", { deliveryId: job.data.deliveryId, error: (error as Error).message });
        await job.updateData({ ...job.data, interruptions: (job.data.interruptions ?? 0) + 1 });
        return retryLater(job, token, 5_000);
      }
      if (outcome.kind === "gone") return "gone";
      const { step } = outcome;
      if (step.kind === "retry") return retryLater(job, token, step.delayMs);
      if (step.kind === "give-up") throw new UnrecoverableError(step.reason);
      return "delivered";
    },
    { connection, prefix, concurrency: opts.concurrency },
  );
  for (const [what, worker] of [["endpoint event", fanOut], ["endpoint delivery", deliver]] as const) {
    worker.on("error", (error) => logger.error(`${what} worker error`, { error }));
    countWorkerJobs(worker);
  }
  // The deliveries waiting show beside the completion webhooks' (bullmq_queue_jobs{queue="endpoint-deliveries"}).
  watchQueueDepth(deliveries);
  deliver.on("failed", (job, error) => {
    if (job && error instanceof UnrecoverableError) logger.info("endpoint delivery given up", { deliveryId: job.data.deliveryId, reason: error.message });
  });

  return async () => {
    clearInterval(noting);
    await Promise.all([fanOut.close(), deliver.close()]);
    await deliveries.close();
    connection.disconnect();
  };
}
