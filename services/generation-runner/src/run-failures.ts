// The worker's policy for a run that failed (worker.ts), once a cancel or an end elsewhere is ruled
// out: which failure waits for a dependency without spending an attempt, which fails the article,
// and which leaves the job to BullMQ's next attempt; then, for an article the runner could not
// fail, whether its job runs again later. Rules are read in order; the first that holds decides.
import { Code, ConnectError } from "@connectrpc/connect";
import { databaseOutageOf } from "../../kit/src/db.ts";
import { ProviderOutage } from "./domain/call-failures.ts";
import { ArticleCannotRun } from "./domain/pipeline.ts";

/** How long after its creation a job whose article could not be failed keeps running again. */
export const PARK_LIMIT_MS = 86_400_000;

/** What the policy reads of a failed run. */
export interface RunFailure {
  /** Our own services or Postgres could not be reached: what said so. */
  dependencyOutage?: string;
  /** The article can never run (its brief, its workflow), or its provider stayed away past the outage bound. */
  hopeless: boolean;
  /** The job's last attempt. */
  finalAttempt: boolean;
  /** Since the job was created. */
  ageMs: number;
}

export type RunFailureStep = "wait-for-dependency" | "fail-article" | "retry-attempt";

/** The rules, in order. */
export const RUN_FAILURE_RULES: { step: RunFailureStep; when: (failure: RunFailure, outageLimitMs: number) => boolean }[] = [
  // The article waits for them without spending an attempt, up to the outage bound.
  { step: "wait-for-dependency", when: (f, outageLimitMs) => f.dependencyOutage !== undefined && f.ageMs < outageLimitMs },
  { step: "fail-article", when: (f) => f.hopeless || f.finalAttempt },
  { step: "retry-attempt", when: () => true },
];

export function runFailureStep(failure: RunFailure, outageLimitMs: number): RunFailureStep {
  return RUN_FAILURE_RULES.find((rule) => rule.when(failure, outageLimitMs))!.step;
}

/** What says our own services or Postgres could not be reached (not that a request was wrong). */
export function dependencyOutageOf(error: unknown): string | undefined {
  if (error instanceof ConnectError && (error.code === Code.Unavailable || error.code === Code.DeadlineExceeded)) return error.message;
  return databaseOutageOf(error);
}

/** The policy's reading of `error` in a job of this age and attempt. */
export function runFailureOf(error: unknown, job: { ageMs: number; finalAttempt: boolean }): RunFailure {
  return {
    dependencyOutage: dependencyOutageOf(error),
    hopeless: error instanceof ArticleCannotRun || error instanceof ProviderOutage,
    finalAttempt: job.finalAttempt,
    ageMs: job.ageMs,
  };
}

/**
 * The wait for a dependency: doubling with the tries it already waited (attempts started, not
 * made), from `firstMs` (RUNNER_DEPENDENCY_WAIT_MS, 1 s) to 30 s.
 */
export function dependencyWaitMs(attemptsStarted: number, attemptsMade: number, firstMs = 1000): number {
  return Math.min(30_000, firstMs * 2 ** Math.min(Math.max(attemptsStarted - attemptsMade - 1, 0), 5));
}

/** How failing the article ended: failed, found finished (completed meanwhile, or unknown), or article-store unreachable. */
export type ArticleFailing = "failed" | "finished" | "unreachable";

/**
 * Ending the job when its article was not failed would leave the article running forever, or a
 * completed one without its settlement and webhook: the job runs again later, for a day at most.
 */
export function stepAfterFailing(ended: ArticleFailing, ageMs: number): "end-job" | "run-again-later" {
  return ended !== "failed" && ageMs < PARK_LIMIT_MS ? "run-again-later" : "end-job";
}
