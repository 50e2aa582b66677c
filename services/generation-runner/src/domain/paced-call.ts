// A call to a provider (a model, the image model, a batch submission, the search engine) made the
// way a real provider needs: it waits its turn for the shared budget (fair-gate.ts), a 429 pauses
// the budget for the time the provider asks and the call goes again (never a failed attempt), and
// an outage (server errors, broken connections) opens the model's circuit breaker: the call moves
// to the fallback model when there is one, else waits for the probe that finds the provider back.
// A call given a Parking waits long outside its job: its article is parked (parking.ts).
// Only what will not heal fails the call: a refusal (4xx), a timeout (the step's budget is spent;
// the job's attempts decide), a few outage errors in a row before the breaker opens, or an
// outage longer than the runner's bound (PROVIDER_OUTAGE_LIMIT_MS, hours).
import OpenAI from "openai";
import type { Logger } from "../../../kit/src/logger.ts";
import { budgetLimit, budgetRemaining, providerAnswers, recordBreakerState } from "../../../kit/src/metrics.ts";
import { CircuitBreakers } from "./circuit-breaker.ts";
import type { BudgetState, CallScheduling, PacedTarget, Ticket } from "../scheduler/index.ts";

export { CallFailed, CallTimeout, ProviderOutage, failureKind, type FailureKind } from "./call-failures.ts";
import { CallFailed, CallTimeout, ProviderOutage, describe, failureKind } from "./call-failures.ts";
import { CallTries, FAILURE_STEPS, providerWaitMs, stepAfterBreaker } from "./call-tries.ts";
import { readLimitReport, retryDelayOf } from "./rate-limit-headers.ts";


export interface ProviderAnswer<T> {
  value: T;
  headers?: Headers;
  /** Tokens the call really used (its reservation settles to them). */
  tokens?: number;
}


export interface PacedResult<T> {
  value: T;
  target: PacedTarget;
  /** Time spent waiting for capacity, for a rate limit or for the provider to come back. */
  waitedMs: number;
}

/** What a paced call runs: the call itself, the probe that tests an open breaker, and (optionally) the call that reads the provider's limits. */
export interface ProviderCalls<T> {
  call: (target: PacedTarget, signal: AbortSignal) => Promise<ProviderAnswer<T>>;
  /** A small call that shows the provider answers again; never the caller's own request, which may fail for reasons of its own. */
  probe: (target: PacedTarget, signal: AbortSignal) => Promise<unknown>;
  /** A small call whose answer's headers tell the provider's limits; without it they are learned from the calls themselves. */
  readLimits?: (target: PacedTarget, signal: AbortSignal) => Promise<Headers | undefined>;
}

/** How long the call that reads a provider's limits may take. */
const LIMITS_READ_MS = 10_000;

/** How long a 429 without a delay pauses the budget. */
const DEFAULT_RATE_LIMIT_PAUSE_MS = 1000;

/** The rate-limit headers of a failed call, where its error carries them. */
function headersOf(error: unknown): Headers | undefined {
  if (error instanceof OpenAI.APIError) return error.headers ?? undefined;
  return (error as { headers?: Headers }).headers;
}

export class Pacer {
  /** Budgets whose limits this runner has looked up (or is looking up) before its first call. */
  private readonly limitsRead = new Map<string, Promise<void>>();

  constructor(
    /** The budgets' lines the calls wait in, and what they spend (the runner's scheduler). */
    private readonly scheduler: CallScheduling,
    readonly breakers: CircuitBreakers,
    private readonly logger: Logger,
    /** How long a call waits out an outage before it fails (PROVIDER_OUTAGE_LIMIT_MS). */
    readonly outageLimitMs: number,
    /** The first wait before a call tries again after an outage error (doubling; PROVIDER_RETRY_DELAY_MS). */
    readonly retryDelayMs = 1000,
  ) {}

  /**
   * Runs `calls.call` on the first target whose breaker lets it through (the fallbacks follow the
   * primary), within the ticket's turn in the budget, until it answers or fails for good.
   * `timeoutMs` bounds each try of the call, not the waits between them.
   */
  async run<T>(targets: PacedTarget[], ticket: Ticket, timeoutMs: number, calls: ProviderCalls<T>): Promise<PacedResult<T>> {
    const tries = new CallTries(targets, ticket);
    for (;;) {
      ticket.signal?.throwIfAborted();
      const candidates = tries.candidates();
      const passage = await this.chooseTarget(candidates, calls.probe, timeoutMs, ticket.signal);
      if (!passage.chosen) {
        await this.waitForProvider(tries, candidates, passage.retryInMs, ticket, calls.probe, timeoutMs);
        continue;
      }
      const answered = await this.tryTarget(passage.chosen, passage.streak, candidates, tries, ticket, timeoutMs, calls);
      if (answered) return answered;
    }
  }

  /**
   * The first candidate whose breaker lets the call through, or whose probe (this caller tests the
   * provider for everyone) finds it back; none: when the next breaker may let it through.
   */
  private async chooseTarget(
    candidates: PacedTarget[],
    probe: ProviderCalls<unknown>["probe"],
    timeoutMs: number,
    signal: AbortSignal | undefined,
  ): Promise<{ chosen?: PacedTarget; streak: boolean; retryInMs: number }> {
    let streak = false;
    let retryInMs = Infinity;
    for (const target of candidates) {
      const passage = await this.breakers.pass(target.id);
      streak = passage.streak;
      if (passage.probe) {
        const healthy = await this.probe(target, probe, timeoutMs, signal);
        recordBreakerState(target.id, healthy ? "closed" : "open");
        if (healthy) return { chosen: target, streak, retryInMs };
        continue;
      }
      recordBreakerState(target.id, passage.go ? "closed" : "open");
      if (passage.go) return { chosen: target, streak, retryInMs };
      retryInMs = Math.min(retryInMs, passage.retryInMs);
    }
    return { streak, retryInMs };
  }

  /** No target lets the call through: the article parks until a probe finds one back (never returns), or the call waits here. */
  private async waitForProvider(tries: CallTries, candidates: PacedTarget[], retryInMs: number, ticket: Ticket, probe: ProviderCalls<unknown>["probe"], timeoutMs: number): Promise<void> {
    tries.noTarget(candidates, this.outageLimitMs);
    tries.waiting("provider_unavailable", candidates[0]!.id);
    if (ticket.parking) {
      const parked = { ...ticket, parking: ticket.parking };
      return await this.scheduler.enqueue({ reason: "provider_unavailable", targets: candidates, ticket: parked, outage: tries.outageSoFar(), probe: (target) => this.probe(target, probe, timeoutMs) });
    }
    await this.nap(tries, providerWaitMs(retryInMs), ticket.signal);
  }

  /** One try of the call on `chosen`, in its turn of the budget: its result, or undefined to go round again. */
  private async tryTarget<T>(chosen: PacedTarget, streak: boolean, candidates: PacedTarget[], tries: CallTries, ticket: Ticket, timeoutMs: number, calls: ProviderCalls<T>): Promise<PacedResult<T> | undefined> {
    if (calls.readLimits) await this.readLimitsOnce(chosen, calls.readLimits);
    // An unbounded budget (nothing configured, learned or paused) costs no Redis call, before or after.
    const { budgets } = this.scheduler;
    const bounded = !(await budgets.isUnbounded(chosen.id, chosen.limits));
    const admitted = bounded
      ? await this.scheduler.enqueue({ reason: "capacity", target: chosen, ticket, outage: tries.outageSoFar(), onWait: () => tries.waiting("capacity", chosen.id) })
      : (budgets.countCall(chosen.id), { leaseId: undefined, waitedMs: 0 });
    tries.waitedMs += admitted.waitedMs;
    let answer: ProviderAnswer<T>;
    try {
      answer = await withTimeout(timeoutMs, ticket.signal, (signal) => calls.call(chosen, signal));
    } catch (failure) {
      if (bounded) await this.settle(chosen, ticket.tokens, 0, admitted.leaseId);
      if (ticket.signal?.aborted) throw ticket.signal.reason;
      await this.afterFailure(chosen, failure, candidates, tries, ticket.signal);
      return undefined;
    }
    providerAnswers.labels(chosen.id, "ok").inc();
    await Promise.all([
      bounded ? this.settle(chosen, ticket.tokens, answer.tokens ?? ticket.tokens, admitted.leaseId) : undefined,
      this.learn(chosen, answer.headers),
      this.breakers.succeeded(chosen.id, { streak }),
      // An outage the article carried through its parks is over.
      ticket.parking?.outage ? ticket.parking.outageEnded() : undefined,
    ]);
    return { value: answer.value, target: chosen, waitedMs: tries.waitedMs };
  }

  /** A failed try: the step FAILURE_STEPS (then stepAfterBreaker) names; returns to go round again, throws to end the call. */
  private async afterFailure(chosen: PacedTarget, failure: unknown, candidates: PacedTarget[], tries: CallTries, signal: AbortSignal | undefined): Promise<void> {
    tries.failures.set(chosen.id, failure);
    const kind = failureKind(failure);
    providerAnswers.labels(chosen.id, kind).inc();
    switch (FAILURE_STEPS[kind]) {
      case "pause-budget":
        // A quota that renews only after the outage bound (a monthly one) ends the wait like an outage would.
        if (Date.now() - tries.started > this.outageLimitMs) throw new ProviderOutage(`${chosen.id} still refuses calls (429) after ${Math.round(this.outageLimitMs / 60_000)} min: ${describe(failure)}`);
        await this.rateLimited(chosen, failure);
        tries.waiting("rate_limited", chosen.id);
        return;
      case "skip-target":
        tries.skip(chosen);
        return;
      case "fail":
        throw new CallFailed(tries.failures);
      case "count-on-breaker":
        break;
    }
    const state = await this.breakers.failed(chosen.id, false);
    if (state.open) this.logger.warn("provider unavailable: circuit open", { model: chosen.id, retryInMs: state.retryInMs, error: describe(failure) });
    switch (stepAfterBreaker(kind as "outage" | "timeout", state.open, tries.outageErrors, tries.canDemote(chosen, candidates))) {
      case "fail":
        throw new CallFailed(tries.failures);
      case "try-again":
        return;
      case "demote-target":
        tries.outageTried();
        tries.demote(chosen);
        return;
      case "back-off":
        await this.nap(tries, this.retryDelayMs * 2 ** (tries.outageTried() - 1), signal);
    }
  }

  private async nap(tries: CallTries, ms: number, signal: AbortSignal | undefined): Promise<void> {
    await sleep(ms, signal);
    tries.waitedMs += ms;
  }

  /**
   * Before this runner's first call on a budget with no configured limits that no replica has
   * learned yet: one small call reads the provider's x-ratelimit headers, so a burst never reaches
   * a provider whose limits are unknown. The budget's other calls wait for it (10 s at most).
   */
  private async readLimitsOnce(target: PacedTarget, readLimits: (target: PacedTarget, signal: AbortSignal) => Promise<Headers | undefined>): Promise<void> {
    const { requestsPerMinute, tokensPerMinute } = target.limits;
    if (requestsPerMinute || tokensPerMinute) return;
    let reading = this.limitsRead.get(target.id);
    if (!reading) {
      reading = (async () => {
        const state = await this.scheduler.budgets.state(target.id);
        if (state.learnedRequestsPerMinute || state.learnedTokensPerMinute) return;
        const headers = await withTimeout(LIMITS_READ_MS, undefined, (signal) => readLimits(target, signal)).catch((error) => headersOf(error));
        await this.learn(target, headers);
      })().catch(() => {});
      this.limitsRead.set(target.id, reading);
    }
    await reading;
  }

  /** Tests an open breaker's provider with the small probe call: success closes it for every replica. */
  private async probe(target: PacedTarget, probe: (target: PacedTarget, signal: AbortSignal) => Promise<unknown>, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    try {
      await withTimeout(Math.min(timeoutMs, 30_000), signal, (s) => probe(target, s));
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      providerAnswers.labels(target.id, "probe_failed").inc();
      const state = await this.breakers.failed(target.id, true);
      this.logger.warn("provider still unavailable: probe failed", { model: target.id, retryInMs: state.open ? state.retryInMs : 0, error: describe(error) });
      return false;
    }
    await this.breakers.succeeded(target.id, { streak: true });
    this.logger.info("provider back: circuit closed", { model: target.id });
    return true;
  }

  /** Settles a bounded budget's reservation to the tokens used, and frees its concurrency slot. */
  private async settle(target: PacedTarget, estimated: number, used: number, leaseId: string | undefined): Promise<void> {
    await this.scheduler.budgets.settle(target.id, target.limits, used - estimated, leaseId).catch((error) =>
      this.logger.warn("could not settle a provider budget", { budget: target.id, error: (error as Error).message }),
    );
  }

  /** A 429: the whole budget pauses for the time the provider asks, and learns the limit it reports. */
  private async rateLimited(target: PacedTarget, error: unknown): Promise<void> {
    const headers = headersOf(error);
    const report = readLimitReport(headers);
    const pauseMs = retryDelayOf(headers) ?? DEFAULT_RATE_LIMIT_PAUSE_MS;
    const state = await this.scheduler.budgets.report(target.id, { pauseMs, requestsPerMinute: report.requestsPerMinute, tokensPerMinute: report.tokensPerMinute, refused: true });
    showLimits(target, state);
    this.logger.info("provider rate limit: budget paused", { budget: target.id, pauseMs, learnedRequestsPerMinute: state.learnedRequestsPerMinute || undefined });
  }

  /** Keeps the budget in step with the limits an answer reports (only when they are news). */
  private async learn(target: PacedTarget, headers: Headers | undefined): Promise<void> {
    const report = readLimitReport(headers);
    if (report.remainingRequests !== undefined) budgetRemaining.labels(target.id, "requests").set(report.remainingRequests);
    if (report.remainingTokens !== undefined) budgetRemaining.labels(target.id, "tokens").set(report.remainingTokens);
    if (!this.scheduler.budgets.isNews(target.id, report)) return;
    await this.scheduler.budgets
      .report(target.id, { pauseMs: report.exhaustedForMs, requestsPerMinute: report.requestsPerMinute, tokensPerMinute: report.tokensPerMinute, refused: false })
      .then((state) => showLimits(target, state))
      .catch((error) => this.logger.warn("could not record a provider's limits", { budget: target.id, error: (error as Error).message }));
  }
}

/** The limits a budget is paced to now: the tighter of the operator's and the provider's. */
function showLimits(target: PacedTarget, state: BudgetState): void {
  const tighter = (configured: number | null, learned: number) => (configured && learned ? Math.min(configured, learned) : configured || learned);
  budgetLimit.labels(target.id, "requests").set(tighter(target.limits.requestsPerMinute, state.learnedRequestsPerMinute));
  budgetLimit.labels(target.id, "tokens").set(tighter(target.limits.tokensPerMinute, state.learnedTokensPerMinute));
}

/** Runs `work` with its own timer (a CallTimeout when it runs out), also ended by `outer`. */
async function withTimeout<T>(timeoutMs: number, outer: AbortSignal | undefined, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const timer = new AbortController();
  const timeout = setTimeout(() => timer.abort(new CallTimeout(`timed out after ${Math.round(timeoutMs / 1000)} s`)), timeoutMs);
  const signal = outer ? AbortSignal.any([timer.signal, outer]) : timer.signal;
  try {
    return await work(signal);
  } catch (error) {
    if (outer?.aborted) throw outer.reason;
    if (timer.signal.aborted) throw timer.signal.reason;
    throw error;
  } finally {
    clearTimeout(timeout);
  }
}

/** Sleeps, ending early (with the signal's reason) when the signal aborts. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (!signal) return Bun.sleep(ms);
  signal.throwIfAborted();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
