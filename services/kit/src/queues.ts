// The typed catalog of background jobs, kept apart from their handlers: queue names, payloads
// and retry policies. Job ids are deterministic (the article's external_id), so enqueueing the
// same work twice while it is queued or running is harmless.
//
// A job leaves Redis as soon as it finishes, completed or failed (FINISHED_JOBS_LEAVE): Redis
// holds live work, and what a finished job stood for is already recorded in Postgres. A job id
// deduplicates only while its job is live; afterwards these records keep each guarantee a kept
// job used to:
// - no second run of a finished article: the runner skips an article whose run finished (its
//   runs row) or that failed, so a generation job enqueued again (the outbox relay repeating a
//   send, the reconciler) ends at once without a model call;
// - one completion webhook: the dispatcher sends nothing for a version already delivered
//   (published_version_id) or a delivery given up (delivery_failed_at), and the reconciler owes
//   a webhook only to a completed article with no delivery on record;
// - one post per publication: a publishing job finds the post an earlier one made and updates it.
// The failures themselves are on the article (failure_reason, its delivery attempts and
// publications) and in the logs.
import { Queue, type ConnectionOptions, type JobsOptions } from "bullmq";
import { isCluster, queuePrefix } from "./redis.ts";
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
  /** The provider outage a parked article is riding out: since when (ms since the epoch) and its attempt's outage errors. */
  outage?: { since?: number; tries: number };
  /** The attempt (BullMQ's attemptsMade) in which the article last parked. */
  parkedInAttempt?: number;
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

/** How an article is to be published (article_store.v1 PublishOptions as the article keeps it); null takes the destination's default. */
export interface PublishOptionsRecord {
  status: string | null;
  /** ISO 8601. */
  publishAt: string | null;
  categories: string[] | null;
  tags: string[] | null;
  slug: string | null;
}

/**
 * Publish one article's current version to one destination: produced by webhook-dispatcher for a
 * publish request and by generation-runner when an article created with `publish` completes,
 * consumed by webhook-dispatcher. The job id is unique per request; the worker runs one job per
 * article and destination at a time, and finds the post an earlier one made, so none duplicates.
 */
export interface PublishingJob {
  externalId: string;
  projectId: number;
  destinationId: number;
  options: PublishOptionsRecord;
  /** ISO 8601: when it was asked for. */
  requestedAt: string;
  trace?: string;
  requestId?: string;
  /** Activations cut short by our own services or by another job holding the same post: not attempts. */
  interruptions?: number;
}

/** The id of one publish request's job (BullMQ ids may not contain ":"). */
export const publishingJobId = (job: Pick<PublishingJob, "externalId" | "destinationId" | "requestedAt">) => `${job.externalId}.${job.destinationId}.${Date.parse(job.requestedAt)}`;

/**
 * An event for the project webhook endpoints that subscribe to it (beyond the spec's completion
 * webhook, which never goes through this): produced by article-store after an article's end or
 * new version committed and by accounts-billing's quota alerts, consumed by webhook-dispatcher,
 * which makes one delivery per subscribed endpoint. Its job id is the event's id, so an event
 * handed over twice is fanned out once while queued, and its deliveries are unique per endpoint.
 */
export interface EndpointEventJob {
  /** Unique per event, e.g. evt_article.completed_<external_id>_<version_id>. */
  eventId: string;
  type: string;
  /** ISO 8601: when it happened. */
  occurredAt: string;
  /** The project whose endpoints receive it; for an account's event, every project of the account. */
  projectId?: number;
  accountId?: number;
  data: Record<string, unknown>;
}

/** One attempt (or the retries) of one delivery to a project webhook endpoint. */
export interface EndpointDeliveryJob {
  deliveryId: number;
  /** A redelivery asked for by a user: one attempt, whatever became of the delivery before. */
  redelivery?: boolean;
  /** Activations cut short by the dispatcher's own database: not attempts at the receiver. */
  interruptions?: number;
}

/** BullMQ ids may not contain ":". */
export const endpointEventJobId = (eventId: string) => eventId.replaceAll(":", "_");

const FINISHED_JOBS_LEAVE = { removeOnComplete: true, removeOnFail: true } as const satisfies JobsOptions;

export const QUEUES = {
  generation: {
    name: "generation",
    defaults: {
      attempts: 5,
      backoff: { type: "exponential", delay: generationRetryDelayMs },
      ...FINISHED_JOBS_LEAVE,
    } satisfies JobsOptions,
  },
  webhooks: {
    name: "webhooks",
    // Attempts and backoff come from WEBHOOK_ATTEMPTS / WEBHOOK_BACKOFF_MS (webhook-dispatcher).
    defaults: FINISHED_JOBS_LEAVE,
  },
  publishing: {
    name: "publishing",
    // Attempts and backoff come from PUBLISH_ATTEMPTS / PUBLISH_BACKOFF_MS (webhook-dispatcher);
    // each attempt's outcome is recorded on the article.
    defaults: FINISHED_JOBS_LEAVE,
  },
  "endpoint-events": {
    name: "endpoint-events",
    // Fanning out is a few statements: retried quickly while the database or Redis is away.
    defaults: { attempts: 10, backoff: { type: "exponential", delay: 1000 }, ...FINISHED_JOBS_LEAVE } satisfies JobsOptions,
  },
  "endpoint-deliveries": {
    name: "endpoint-deliveries",
    // Attempts and backoff come from WEBHOOK_ATTEMPTS / WEBHOOK_BACKOFF_MS (webhook-dispatcher).
    defaults: FINISHED_JOBS_LEAVE,
  },
} as const;

export type QueueName = keyof typeof QUEUES;

// The entries BullMQ keeps of a queue's event log (each job's added, active, completed, …), a
// record of finished work too: enough for a listener following the queue live, and nothing here
// reads it. At BullMQ's default of 10,000 a queue's log held about 1 MB whatever the work.
// Every process opens its queues here, so this is the value the queue's settings keep.
const QUEUE_EVENTS_KEPT = 1_000;

export function openQueue<T>(name: QueueName, connection: ConnectionOptions, redisPrefix: string): Queue<T> {
  return new Queue<T>(QUEUES[name].name, { connection, prefix: queuePrefix(redisPrefix, isCluster(connection)), defaultJobOptions: QUEUES[name].defaults, streams: { events: { maxLen: QUEUE_EVENTS_KEPT } } });
}

/**
 * A worker's job locks: a job stays its worker's for `lockDurationMs` without a renewal (BullMQ
 * renews it at half of that while the job runs), and stalled jobs (their worker died) are looked
 * for as often, so a dead worker's jobs go out again within about one and a half lock durations.
 */
export const jobLocks = (lockDurationMs: number) => ({ lockDuration: lockDurationMs, stalledInterval: Math.max(1000, Math.floor(lockDurationMs / 2)) });
