// What becomes of a run that threw, in the order the worker asks: a cancel settles what the run
// finished; an article ended elsewhere is left alone; otherwise the policy of run-failures.ts
// decides between waiting for a dependency, failing the article, and BullMQ's next attempt.
import { Code, ConnectError } from "@connectrpc/connect";
import { UnrecoverableError, type Job } from "bullmq";
import { CANCELLED_REASON } from "../../kit/src/article-events.ts";
import type { Logger } from "../../kit/src/logger.ts";
import { QUEUES, type GenerationJob } from "../../kit/src/queues.ts";
import { isRunningStatus } from "../../kit/src/rules/article-statuses.ts";
import { formatUsd } from "../../kit/src/rules/usd.ts";
import { endedByCancel, settleCancelledRun } from "./domain/cancellation.ts";
import { runCost, updateRun } from "./domain/checkpoints.ts";
import type { JobControl, PipelineDeps } from "./domain/pipeline.ts";
import { withoutOutage } from "./job-control.ts";
import { dependencyWaitMs, runFailureOf, runFailureStep, stepAfterFailing, type ArticleFailing } from "./run-failures.ts";

// How long a job that spent its attempts without ending its article waits before it runs again,
// and for how long after its creation it keeps doing so.
const UNFAILABLE_RETRY_MS = Math.min(60_000, 5 * QUEUES.generation.defaults.backoff.delay);

export type FailedRunDeps = Pick<PipelineDeps, "db" | "articles" | "lifecycle" | "quota"> & { logger: Logger; outageLimitMs: number; dependencyWaitMs: number };

/** Terminal failure: status failed with the reason (no webhook), reserved words released; "finished" when it had already completed (or is unknown). */
export async function failArticle(deps: FailedRunDeps, externalId: string, reason: string): Promise<"failed" | "finished"> {
  // The article's cost is the ledger's total: a report with the last steps' costs may never have gone out.
  const cost = await runCost(deps.db, externalId).then(formatUsd, () => undefined);
  for (let attempt = 1; ; attempt++) {
    try {
      await deps.lifecycle.failArticle({ externalId, reason: reason.slice(0, 2000), cost });
      await deps.quota.releaseWords({ reference: externalId });
      deps.logger.warn("article failed", { externalId, reason });
      return "failed";
    } catch (error) {
      // Completed meanwhile (or unknown): nothing to fail, and its words are the completion's to settle.
      if (error instanceof ConnectError && (error.code === Code.FailedPrecondition || error.code === Code.NotFound)) return "finished";
      if (attempt >= 5) throw error;
      await Bun.sleep(500 * attempt);
    }
  }
}

/** The run's outcome after `error`, or the error BullMQ is to see (a DelayedError when the job waits). */
export async function afterRunError(deps: FailedRunDeps, job: Job<GenerationJob>, control: JobControl, error: unknown): Promise<string> {
  const { externalId } = job.data;
  const { logger } = deps;
  if (await endedByCancel(deps.articles, externalId, error)) return settleCancel(deps, externalId);
  // The article was failed or finished elsewhere while this run was under way.
  if (error instanceof ConnectError && error.code === Code.FailedPrecondition) {
    const found = await deps.articles.getArticle({ identifier: externalId }).catch(() => undefined);
    if (found?.article && !isRunningStatus(found.article.status)) return "skipped";
  }
  const reason = error instanceof Error ? error.message : String(error);
  // Best effort (no run row yet is a no-op): the reason must not stand in the way of failing the article.
  await updateRun(deps.db, externalId, { lastError: reason }).catch(() => {});
  const failure = runFailureOf(error, { ageMs: Date.now() - job.timestamp, finalAttempt: control.finalAttempt });
  const step = runFailureStep(failure, deps.outageLimitMs);
  if (step === "wait-for-dependency") {
    const waitMs = dependencyWaitMs(job.attemptsStarted, job.attemptsMade, deps.dependencyWaitMs);
    logger.warn("a dependency is unavailable: the article waits for it", { externalId, waitMs, error: failure.dependencyOutage });
    return control.resumeLater(waitMs);
  }
  if (step === "fail-article") {
    let ended: ArticleFailing;
    try {
      ended = await failArticle(deps, externalId, reason);
    } catch (unreachable) {
      logger.error("could not fail the article", { externalId, error: (unreachable as Error).message });
      ended = "unreachable";
    }
    if (stepAfterFailing(ended, Date.now() - job.timestamp) === "run-again-later") {
      logger.warn("the job runs again later", { externalId, article: ended === "finished" ? "completed, hand-offs pending" : "unreachable" });
      return control.resumeLater(UNFAILABLE_RETRY_MS);
    }
    throw new UnrecoverableError(reason);
  }
  logger.warn("generation attempt failed; it will be retried", { externalId, attempt: job.attemptsMade + 1, reason });
  // The next attempt rides out an outage of its own.
  if (job.data.outage) await job.updateData(withoutOutage(job.data)).catch(() => {});
  throw error;
}

/** A client's cancel ended the run: the words of what it finished are settled, the rest released. */
async function settleCancel(deps: FailedRunDeps, externalId: string): Promise<string> {
  const words = await settleCancelledRun(deps.db, deps.quota, externalId);
  // The cancel failed the article before its finished steps' costs were all reported.
  const cost = await runCost(deps.db, externalId).then(formatUsd, () => undefined);
  if (cost !== undefined) await deps.lifecycle.failArticle({ externalId, reason: CANCELLED_REASON, cost }).catch(() => {});
  await updateRun(deps.db, externalId, { lastError: "cancelled by the client", finishedAt: new Date() }).catch(() => {});
  deps.logger.info("article cancelled", { externalId, settledWords: words });
  return "cancelled";
}
