// The small steps of a paced provider call (call-tries.ts: what follows a failed try, which targets
// are still worth trying, when an outage has lasted too long) and the worker's failure policy
// (run-failures.ts: wait for a dependency, fail the article, or leave the job to its next attempt),
// each alone, with no Redis and no provider.
import { describe, expect, test } from "bun:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { CallFailed, CallTimeout, ProviderOutage } from "../../services/generation-runner/src/domain/call-failures.ts";
import { CallTries, FAILURE_STEPS, OUTAGE_TRIES, providerWaitMs, stepAfterBreaker } from "../../services/generation-runner/src/domain/call-tries.ts";
import type { PacedTarget, Ticket } from "../../services/generation-runner/src/scheduler/ticket.ts";
import { NO_LIMITS } from "../../services/generation-runner/src/scheduler/provider-capacity.ts";
import { ArticleCannotRun } from "../../services/generation-runner/src/domain/pipeline.ts";
import { PARK_LIMIT_MS, dependencyWaitMs, runFailureOf, runFailureStep, stepAfterFailing } from "../../services/generation-runner/src/run-failures.ts";

const target = (id: string): PacedTarget => ({ id, limits: NO_LIMITS });
const [primary, fallback] = [target("primary"), target("fallback")];
const ticket = (extra: Partial<Ticket> = {}): Ticket => ({ account: "1", since: 0, tokens: 0, ...extra });
const parkedTicket = (outage?: { since?: number; tries: number }): Ticket =>
  ticket({ parking: { article: "a", outage, park: async () => { throw new Error("unused"); }, outageEnded: async () => {} } });

describe("a paced call's steps", () => {
  test("after a failed try: a 429 pauses the budget, not here skips the target, an outage or timeout counts on its breaker, anything else fails", () => {
    expect(FAILURE_STEPS).toEqual({ rate_limited: "pause-budget", elsewhere: "skip-target", outage: "count-on-breaker", timeout: "count-on-breaker", final: "fail" });
  });

  test("after the breaker counted it: a timeout fails; an open breaker tries again; a closed one demotes the target once, backs off, and fails at the last outage try", () => {
    expect(stepAfterBreaker("timeout", false, 0, true)).toBe("fail");
    expect(stepAfterBreaker("timeout", true, 0, true)).toBe("fail");
    expect(stepAfterBreaker("outage", true, OUTAGE_TRIES + 5, true)).toBe("try-again");
    expect(stepAfterBreaker("outage", false, 0, true)).toBe("demote-target");
    expect(stepAfterBreaker("outage", false, 0, false)).toBe("back-off");
    expect(stepAfterBreaker("outage", false, OUTAGE_TRIES - 2, false)).toBe("back-off");
    expect(stepAfterBreaker("outage", false, OUTAGE_TRIES - 1, true)).toBe("fail");
  });

  test("with no target to try, the call looks again at the breakers' next probe: 250 ms to 5 s, plus up to half a second of jitter", () => {
    expect(providerWaitMs(Infinity, 0)).toBe(250);
    expect(providerWaitMs(100, 0)).toBe(250);
    expect(providerWaitMs(1200, 0)).toBe(1200);
    expect(providerWaitMs(60_000, 0)).toBe(5000);
    expect(providerWaitMs(1200, 1)).toBe(1700);
  });

  test("targets still worth trying: a skipped one never again, a demoted one after the others; none left fails the call with the failures so far", () => {
    const tries = new CallTries([primary, fallback], ticket());
    expect(tries.candidates()).toEqual([primary, fallback]);
    expect(tries.canDemote(primary, tries.candidates())).toBe(true);
    tries.demote(primary);
    expect(tries.candidates()).toEqual([fallback, primary]);
    expect(tries.canDemote(primary, tries.candidates())).toBe(false);
    tries.skip(fallback);
    expect(tries.candidates()).toEqual([primary]);
    expect(tries.canDemote(primary, tries.candidates())).toBe(false);
    tries.failures.set("primary", new CallTimeout("timed out after 30 s"));
    tries.skip(primary);
    expect(() => tries.candidates()).toThrow(CallFailed);
    expect(() => tries.candidates()).toThrow("primary timed out after 30 s");
  });

  test("an outage carried through the article's parks goes on counting: its start and tries", () => {
    expect(new CallTries([primary], ticket()).outageSoFar()).toBeUndefined();
    const tries = new CallTries([primary], parkedTicket({ since: 1000, tries: 1 }));
    expect(tries.outageSoFar()).toEqual({ since: 1000, tries: 1 });
    expect(tries.outageTried()).toBe(2);
    expect(tries.outageSoFar()).toEqual({ since: 1000, tries: 2 });
  });

  test("no target: the outage starts counting now, and past the bound fails the call naming the targets", () => {
    const fresh = new CallTries([primary, fallback], ticket());
    fresh.noTarget([primary, fallback], 60_000);
    expect(fresh.outageSoFar()!.since).toBeGreaterThan(Date.now() - 1000);
    const old = new CallTries([primary, fallback], parkedTicket({ since: Date.now() - 120_000, tries: 0 }));
    expect(() => old.noTarget([primary, fallback], 60_000)).toThrow(ProviderOutage);
    expect(() => old.noTarget([primary, fallback], 60_000)).toThrow("primary, fallback unavailable for more than 1 min");
  });

  test("the caller is told of each reason it waits for once", () => {
    const told: string[] = [];
    const tries = new CallTries([primary], ticket({ onWait: (reason, at) => told.push(`${reason}@${at}`) }));
    tries.waiting("capacity", "primary");
    tries.waiting("capacity", "primary");
    tries.waiting("rate_limited", "primary");
    expect(told).toEqual(["capacity@primary", "rate_limited@primary"]);
  });
});

describe("the worker's failure policy", () => {
  const young = { ageMs: 1000, finalAttempt: false };
  const LIMIT = 6 * 3_600_000;
  const stepOf = (error: unknown, job = young) => runFailureStep(runFailureOf(error, job), LIMIT);

  test("a dependency away (our services unavailable or late, Postgres) waits for it without spending an attempt, within the outage bound", () => {
    expect(stepOf(new ConnectError("down", Code.Unavailable))).toBe("wait-for-dependency");
    expect(stepOf(new ConnectError("late", Code.DeadlineExceeded))).toBe("wait-for-dependency");
    // Even on the last attempt: it was never spent.
    expect(stepOf(new ConnectError("down", Code.Unavailable), { ageMs: 1000, finalAttempt: true })).toBe("wait-for-dependency");
    // Past the bound, it is an attempt's failure like any other.
    expect(stepOf(new ConnectError("down", Code.Unavailable), { ageMs: LIMIT + 1, finalAttempt: false })).toBe("retry-attempt");
    expect(stepOf(new ConnectError("down", Code.Unavailable), { ageMs: LIMIT + 1, finalAttempt: true })).toBe("fail-article");
  });

  test("an article that cannot run, or whose provider stayed away past the bound, fails at once; so does any failure of the last attempt", () => {
    expect(stepOf(new ArticleCannotRun("no such workflow"))).toBe("fail-article");
    expect(stepOf(new ProviderOutage("gone for 6 h"))).toBe("fail-article");
    expect(stepOf(new Error("the model wrote nothing"), { ageMs: 1000, finalAttempt: true })).toBe("fail-article");
  });

  test("any other failure leaves the job to its next attempt", () => {
    expect(stepOf(new Error("the model wrote nothing"))).toBe("retry-attempt");
    expect(stepOf(new ConnectError("refused", Code.InvalidArgument))).toBe("retry-attempt");
  });

  test("the wait for a dependency doubles with the tries it already waited, 1 s to 30 s", () => {
    expect([1, 2, 3, 4, 5, 6, 7, 10].map((started) => dependencyWaitMs(started, 0))).toEqual([1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000]);
    expect(dependencyWaitMs(3, 2)).toBe(1000);
    expect([1, 2, 3].map((started) => dependencyWaitMs(started, 0, 250))).toEqual([250, 500, 1000]);
  });

  test("an article the runner could not fail (found finished, or article-store unreachable) has its job run again later, for a day at most", () => {
    expect(stepAfterFailing("failed", 1000)).toBe("end-job");
    expect(stepAfterFailing("finished", 1000)).toBe("run-again-later");
    expect(stepAfterFailing("unreachable", 1000)).toBe("run-again-later");
    expect(stepAfterFailing("unreachable", PARK_LIMIT_MS)).toBe("end-job");
  });
});
