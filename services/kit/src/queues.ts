// The typed catalog of background jobs, kept apart from their handlers: queue names, payloads
// and retry policies. Job ids are deterministic (the article's external_id), so enqueueing the
// same work twice is harmless.
import { Queue, type ConnectionOptions, type JobsOptions } from "bullmq";
import { queuePrefix } from "./redis.ts";
import { envInt, failOnConfigError } from "./config.ts";

// The first retry delay of a generation job (doubling after each failure). Tests shorten it.
const generationRetryDelayMs = failOnConfigError(() => envInt(process.env, "GENERATION_RETRY_DELAY_MS", 2000, { min: 10, max: 600_000 }));

/** Generate one article: produced by article-store's outbox relay, consumed by generation-runner. */
export interface GenerationJob {
  externalId: string;
  /** The W3C traceparent of the request that created the article, when traces are exported. */
  trace?: string;
  /** The id of the request that created the article: its run's log lines carry it. */
  requestId?: string;
}

/** Deliver one article's completion webhook: produced by generation-runner, consumed by webhook-dispatcher. */
export interface WebhookJob {
  externalId: string;
  /** The version the payload describes; it becomes published_version_id on success. */
  versionId: number;
  /** The W3C traceparent of the run that enqueued it, when traces are exported. */
  trace?: string;
  /** The id of the request that created the article. */
  requestId?: string;
  /** Dispatcher bookkeeping: activations cut short by its own dependencies, which are not attempts. */
  interruptions?: number;
}

export const QUEUES = {
  generation: {
    name: "generation",
    defaults: {
      attempts: 5,
      backoff: { type: "exponential", delay: generationRetryDelayMs },
      removeOnComplete: { age: 86_400, count: 10_000 },
      removeOnFail: { age: 7 * 86_400 },
    } satisfies JobsOptions,
  },
  webhooks: {
    name: "webhooks",
    // Attempts and backoff come from WEBHOOK_ATTEMPTS / WEBHOOK_BACKOFF_MS (webhook-dispatcher).
    defaults: {
      removeOnComplete: { age: 86_400, count: 10_000 },
      removeOnFail: { age: 7 * 86_400 },
    } satisfies JobsOptions,
  },
} as const;

export type QueueName = keyof typeof QUEUES;

export function openQueue<T>(name: QueueName, connection: ConnectionOptions, redisPrefix: string): Queue<T> {
  return new Queue<T>(QUEUES[name].name, { connection, prefix: queuePrefix(redisPrefix), defaultJobOptions: QUEUES[name].defaults });
}
