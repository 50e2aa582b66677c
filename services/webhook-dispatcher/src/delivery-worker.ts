// The BullMQ side of deliveries: consumes the `webhooks` queue and turns each attempt's outcome
// into queue moves. The dispatcher owns the retry policy (WEBHOOK_ATTEMPTS, WEBHOOK_BACKOFF_MS)
// whatever options the producer enqueued with: a failed attempt moves the same job to the delayed
// set for the scheduled wait, and BullMQ's count of activations numbers the attempts.
import { DelayedError, UnrecoverableError, Worker, type Job } from "bullmq";
import { QUEUES, type WebhookJob } from "../../kit/src/queues.ts";
import { connectRedis, queuePrefix } from "../../kit/src/redis.ts";
import type { Logger } from "../../kit/src/logger.ts";
import { attemptCompletionDelivery, type DeliveryContext, type DeliveryOutcome } from "./domain/completion-delivery.ts";
import { nextStep } from "./domain/retry-schedule.ts";

export interface DeliveryWorkerOptions {
  context: DeliveryContext;
  redisUrl: string;
  redisPrefix: string;
  concurrency: number;
  logger: Logger;
}

/** Puts the same job back for its next attempt after the wait (BullMQ's documented manual delay). */
async function retryLater(job: Job<WebhookJob>, token: string | undefined, delayMs: number): Promise<never> {
  await job.moveToDelayed(Date.now() + delayMs, token);
  throw new DelayedError();
}

export function startDeliveryWorker(opts: DeliveryWorkerOptions): () => Promise<void> {
  const { context, logger } = opts;
  const connection = connectRedis(opts.redisUrl);

  async function deliver(job: Job<WebhookJob>, token?: string): Promise<DeliveryOutcome> {
    // attemptsStarted counts this activation too; a worker that died mid-attempt spent one.
    const attempt = Math.max(1, job.attemptsStarted);
    const fields = { externalId: job.data.externalId, versionId: job.data.versionId, attempt };
    let outcome: DeliveryOutcome;
    try {
      outcome = await attemptCompletionDelivery(context, job.data, attempt);
    } catch (error) {
      // Another service failed us mid-attempt: spent like a failed delivery, so it cannot loop forever.
      const message = `could not complete the attempt: ${(error as Error).message}`;
      logger.error("delivery attempt interrupted", { ...fields, error: message });
      const step = nextStep({ succeeded: false, refused: false, error: message }, attempt, context.policy);
      if (step.kind !== "retry") throw new UnrecoverableError(message);
      return retryLater(job, token, step.delayMs);
    }

    switch (outcome.kind) {
      case "retry":
        logger.warn("delivery attempt failed; retrying", { ...fields, error: outcome.error, retryInMs: outcome.delayMs });
        return retryLater(job, token, outcome.delayMs);
      case "given-up":
        logger.warn("delivery failed", { ...fields, reason: outcome.reason });
        // Lands in the queue's failed set (kept a week) for operators to inspect.
        throw new UnrecoverableError(outcome.reason);
      case "delivered":
        logger.info("webhook delivered", { ...fields, messageId: outcome.messageId });
        return outcome;
      case "not-sent":
        logger.info("webhook not sent", { ...fields, reason: outcome.reason });
        return outcome;
    }
  }

  const worker = new Worker<WebhookJob, DeliveryOutcome>(QUEUES.webhooks.name, deliver, {
    connection,
    prefix: queuePrefix(opts.redisPrefix),
    concurrency: opts.concurrency,
  });
  worker.on("error", (error) => logger.error("webhook worker error", { error }));

  return async () => {
    // Lets attempts in flight finish (at most the 30 s delivery timeout) before closing.
    await worker.close();
    connection.disconnect();
  };
}
