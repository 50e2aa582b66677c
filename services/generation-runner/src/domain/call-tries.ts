// One paced call's tries (paced-call.ts): the state its steps read and change, and the table of
// what comes after a failed try. The pacer's loop is: choose a target (its breaker lets the call
// through, or a probe finds it back) → none: wait for a provider (or park) → one: take the
// budget's turn and try it → a failure: the step the table names.
import { capacityWaits } from "../../../kit/src/metrics.ts";
import { CallFailed, ProviderOutage, describeFailures, type FailureKind } from "./call-failures.ts";
import type { OutageSoFar, PacedTarget, Ticket, WaitReason } from "../scheduler/index.ts";

/** Outage errors a call rides out (with backoff, trying its other targets first) before failing, while the breaker stays closed. */
export const OUTAGE_TRIES = 3;

/** The first answer to a failed try, by what it was. */
export type FailureStep = "pause-budget" | "skip-target" | "count-on-breaker" | "fail";

/**
 * A 429 pauses the whole budget and the call goes again; "not here" (404, unconfigured) leaves the
 * target for the others; an outage or a timeout counts on the target's breaker first; anything
 * else fails the call.
 */
export const FAILURE_STEPS: Record<FailureKind, FailureStep> = {
  rate_limited: "pause-budget",
  elsewhere: "skip-target",
  outage: "count-on-breaker",
  timeout: "count-on-breaker",
  final: "fail",
};

/** What comes after an outage or timeout counted on the breaker. */
export type AfterBreakerStep = "fail" | "try-again" | "demote-target" | "back-off";

/**
 * A timeout fails the call (the step's budget is spent). An open breaker sends the call elsewhere
 * or makes it wait (the next round finds no target). A closed one lets it ride out a short blip:
 * up to OUTAGE_TRIES, trying its other targets first (the target is demoted once), else backing off.
 */
export function stepAfterBreaker(kind: "outage" | "timeout", breakerOpen: boolean, outageTriesBefore: number, canDemote: boolean): AfterBreakerStep {
  if (kind === "timeout") return "fail";
  if (breakerOpen) return "try-again";
  if (outageTriesBefore + 1 >= OUTAGE_TRIES) return "fail";
  return canDemote ? "demote-target" : "back-off";
}

/** How long a call with no target to try waits before it looks again: the breakers' next probe, bounded, with jitter. */
export function providerWaitMs(retryInMs: number, jitter = Math.random()): number {
  return Math.min(Math.max(retryInMs === Infinity ? 0 : retryInMs, 250), 5000) + jitter * 500;
}

export class CallTries {
  readonly started = Date.now();
  /** Time spent waiting for capacity, for a rate limit or for the provider to come back. */
  waitedMs = 0;
  /** The last failure of each target tried. */
  readonly failures = new Map<string, unknown>();
  /** Targets that answered "not here": not tried again by this call. */
  private readonly skipped = new Set<string>();
  /** Targets that failed as an outage: tried after the others. */
  private readonly demoted = new Set<string>();
  private readonly told = new Set<WaitReason>();
  // An outage ridden out over the article's earlier parks goes on counting here.
  private outageSince: number | undefined;
  private outageTries: number;

  constructor(
    private readonly targets: PacedTarget[],
    private readonly ticket: Ticket,
  ) {
    this.outageSince = ticket.parking?.outage?.since;
    this.outageTries = ticket.parking?.outage?.tries ?? 0;
  }

  /** The targets still worth trying, those demoted last; the call fails when none is left. */
  candidates(): PacedTarget[] {
    const usable = this.targets.filter((t) => !this.skipped.has(t.id));
    if (usable.length === 0) throw new CallFailed(this.failures);
    return [...usable.filter((t) => !this.demoted.has(t.id)), ...usable.filter((t) => this.demoted.has(t.id))];
  }

  outageSoFar(): OutageSoFar | undefined {
    return this.outageSince !== undefined || this.outageTries > 0 ? { since: this.outageSince, tries: this.outageTries } : undefined;
  }

  /** No target lets the call through: the outage counts from now if it had not begun, and fails the call past `limitMs`. */
  noTarget(candidates: PacedTarget[], limitMs: number): void {
    this.outageSince ??= Date.now();
    if (Date.now() - this.outageSince > limitMs) {
      const names = candidates.map((t) => t.id).join(", ");
      throw new ProviderOutage(`${names} unavailable for more than ${Math.round(limitMs / 60_000)} min: ${describeFailures(this.failures)}`);
    }
  }

  /** Counts the call as waiting for `reason` (once per reason). */
  waiting(reason: WaitReason, target: string): void {
    if (this.told.has(reason)) return;
    this.told.add(reason);
    capacityWaits.labels(target, reason).inc();
    this.ticket.onWait?.(reason, target);
  }

  skip(target: PacedTarget): void {
    this.skipped.add(target.id);
  }

  /** Outage errors ridden out so far (over the article's earlier parks too). */
  get outageErrors(): number {
    return this.outageTries;
  }

  /** One more outage error ridden out; the count so far. */
  outageTried(): number {
    return ++this.outageTries;
  }

  canDemote(target: PacedTarget, candidates: PacedTarget[]): boolean {
    return candidates.length > 1 && !this.demoted.has(target.id);
  }

  demote(target: PacedTarget): void {
    this.demoted.add(target.id);
  }
}
