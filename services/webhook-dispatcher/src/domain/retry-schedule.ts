// When a failed delivery attempt is tried again, and when the dispatcher stops trying.

/** The wait before attempt `attempt + 1`: the attempt-th value of the schedule, the last repeating. */
export function backoffAfter(attempt: number, backoffMs: readonly number[]): number {
  return backoffMs[Math.min(attempt, backoffMs.length) - 1] ?? backoffMs.at(-1) ?? 0;
}

export type NextStep =
  | { kind: "done" }
  | { kind: "retry"; delayMs: number }
  | { kind: "give-up"; reason: string };

export interface AttemptVerdict {
  succeeded: boolean;
  /** The URL can never be delivered to (refused address, not http/https): retrying cannot help. */
  refused: boolean;
  error?: string;
}

/**
 * What follows attempt number `attempt` (from 1) of `attempts`. A refused URL gives up at once:
 * an address check or a URL shape does not change between attempts, and hammering a forbidden
 * address three times would only add noise to the log.
 */
export function nextStep(verdict: AttemptVerdict, attempt: number, policy: { attempts: number; backoffMs: readonly number[] }): NextStep {
  if (verdict.succeeded) return { kind: "done" };
  const why = verdict.error ?? "delivery failed";
  if (verdict.refused) return { kind: "give-up", reason: `refused without retrying: ${why}` };
  if (attempt >= policy.attempts) {
    return { kind: "give-up", reason: `all ${policy.attempts} attempt${policy.attempts === 1 ? "" : "s"} failed; last: ${why}` };
  }
  return { kind: "retry", delayMs: backoffAfter(attempt, policy.backoffMs) };
}
