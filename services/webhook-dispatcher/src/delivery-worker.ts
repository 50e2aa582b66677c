// The BullMQ side of deliveries: consumes the `webhooks` queue and turns each attempt's outcome
// into queue moves. The dispatcher owns the retry policy (WEBHOOK_ATTEMPTS, WEBHOOK_BACKOFF_MS)
// whatever options the producer enqueued with: a failed attempt moves the same job to the delayed
// set for the scheduled wait, and BullMQ's count of activations numbers the attempts.
import { withRequestId } from "../../kit/src/request-context.ts";
import { DelayedError, UnrecoverableError, Worker, type Job } from "bullmq";
import { jobLocks, openQueue, QUEUES, type WebhookJob } from "../../kit/src/queues.ts";
import { countWorkerJobs, watchQueueDepth, webhookAttempts } from "../../kit/src/metrics.ts";
import { inJobSpan } from "../../kit/src/tracing.ts";
import { connectRedis, isCluster, queuePrefix } from "../../kit/src/redis.ts";
import type { Logger } from "../../kit/src/logger.ts";
import { completionDeliveries, type DeliveryContext, type DeliveryOutcome } from "./domain/completion-delivery.ts";

const INTERRUPTED_FOR_AT_MOST_MS = 24 * 3_600_000;
// One pre-created series per outcome of an attempt.
const attempts = {
  delivered: webhookAttempts.labels("delivered"),
  retry: webhookAttempts.labels("retry"),
  "given-up": webhookAttempts.labels("given_up"),
  "not-sent": webhookAttempts.labels("not_sent"),
  interrupted: webhookAttempts.labels("interrupted"),
};

export interface DeliveryWorkerOptions {
  context: DeliveryContext;
  redisUrl: string;
  redisPrefix: string;
  concurrency: number;
  /** DISPATCHER_LOCK_MS (see jobLocks). */
  lockDurationMs: number;
  logger: Logger;
}

/** Puts the same job back for its next attempt after the wait (BullMQ's documented manual delay). */
export async function retryLater(job: Job, token: string | undefined, delayMs: number): Promise<never> {
  await job.moveToDelayed(Date.now() + delayMs, token);
  throw new DelayedError();
}

export function startDeliveryWorker(opts: DeliveryWorkerOptions): () => Promise<void> {
  const { context, logger } = opts;
  const connection = connectRedis(opts.redisUrl);
  const attemptCompletionDelivery = completionDeliveries(context);

  // Each attempt continues the trace of the run that enqueued the webhook.
  const deliver = (job: Job<WebhookJob>, token?: string) => inJobSpan("webhook delivery", job.data.trace, { "messaging.destination.name": QUEUES.webhooks.name }, () => attemptDelivery(job, token));

  async function attemptDelivery(job: Job<WebhookJob>, token?: string): Promise<DeliveryOutcome> {
    // attemptsStarted counts this activation too (a worker that died mid-attempt spent one);
    // activations our own services cut short are not attempts at the receiver.
    const interruptions = job.data.interruptions ?? 0;
    const attempt = Math.max(1, job.attemptsStarted - interruptions);
    const fields = { externalId: job.data.externalId, versionId: job.data.versionId, attempt };
    let outcome: DeliveryOutcome;
    try {
      outcome = await attemptCompletionDelivery(job.data, attempt);
    } catch (error) {
      // Article-store or accounts failed us: wait for them (for a day at most) without spending
      // one of the receiver's attempts.
      const message = `could not complete the attempt: ${(error as Error).message}`;
      attempts.interrupted.inc();
      if (Date.now() - job.timestamp > INTERRUPTED_FOR_AT_MOST_MS) {
        logger.error("delivery abandoned: its dependencies stayed unavailable", { ...fields, error: message });
        throw new UnrecoverableError(message);
      }
      const delayMs = context.policy.backoffMs[Math.min(interruptions, context.policy.backoffMs.length - 1)] ?? 10_000;
      logger.warn("delivery attempt interrupted; trying again later", { ...fields, error: message, retryInMs: delayMs });
      await job.updateData({ ...job.data, interruptions: interruptions + 1 });
      return retryLater(job, token, Math.min(delayMs, 60_000));
    }

    attempts[outcome.kind].inc();
    switch (outcome.kind) {
      case "retry":
        logger.warn("delivery attempt failed; retrying", { ...fields, error: outcome.error, retryInMs: outcome.delayMs });
        return retryLater(job, token, outcome.delayMs);
      case "given-up":
        logger.warn("delivery failed", { ...fields, reason: outcome.reason });
        // Fails the job, which then leaves the queue: the article records the delivery's attempts and why it was given up.
        throw new UnrecoverableError(outcome.reason);
      case "delivered":
        logger.info("webhook delivered", { ...fields, messageId: outcome.messageId });
        return outcome;
      case "not-sent":
        logger.info("webhook not sent", { ...fields, reason: outcome.reason });
        return outcome;
    }
  }

  // A delivery's lines and calls carry the id of the request that created its article.
  const deliverFor = (job: Job<WebhookJob>, token?: string) => withRequestId(job.data.requestId, () => deliver(job, token));
  const worker = new Worker<WebhookJob, DeliveryOutcome>(QUEUES.webhooks.name, deliverFor, {
    connection,
    prefix: queuePrefix(opts.redisPrefix, isCluster(connection)),
    concurrency: opts.concurrency,
    ...jobLocks(opts.lockDurationMs),
  });
  worker.on("error", (error) => logger.error("webhook worker error", { error }));
  countWorkerJobs(worker);
  // Its depth is read at scrape time through a queue handle of its own.
  const queue = openQueue<WebhookJob>("webhooks", connection, opts.redisPrefix);
  watchQueueDepth(queue);

  return async () => {
    // Lets attempts in flight finish (at most the 30 s delivery timeout) before closing.
    await worker.close();
    await queue.close();
    connection.disconnect();
  };
}
