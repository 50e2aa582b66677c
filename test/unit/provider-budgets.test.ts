// The pieces of provider pacing that need no stack: reading providers' rate-limit headers, and the
// shared budget, fair gate, breaker and account shares on the machine's Redis (under a prefix of
// their own) and again on a private Redis Cluster, where every script's keys must share a slot.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { parseResetDuration, readLimitReport, retryDelayOf } from "../../services/generation-runner/src/domain/rate-limit-headers.ts";
import { ProviderCapacity, NO_LIMITS } from "../../services/generation-runner/src/scheduler/provider-capacity.ts";
import { CircuitBreakers, FAILURES_TO_OPEN, MAX_PROBE_GAP_MS } from "../../services/generation-runner/src/domain/circuit-breaker.ts";
import { FairGate } from "../../services/generation-runner/src/scheduler/fair-gate.ts";
import { AccountShares } from "../../services/generation-runner/src/scheduler/account-shares.ts";
import { connectRedis, type RedisConnection } from "../../services/kit/src/redis.ts";
import { dropTestData } from "../harness/stack.ts";
import { eventually } from "../harness/eventually.ts";
import { startRedisCluster } from "../harness/redis-cluster.ts";

const prefix = `test-budgets-${crypto.randomUUID().slice(0, 8)}`;

describe("rate-limit headers", () => {
  test("OpenAI's reset durations", () => {
    expect(parseResetDuration("1s")).toBe(1000);
    expect(parseResetDuration("6m0s")).toBe(360_000);
    expect(parseResetDuration("120ms")).toBe(120);
    expect(parseResetDuration("1.5s")).toBe(1500);
    expect(parseResetDuration("2h3m4s")).toBe(7_384_000);
    expect(parseResetDuration("soon")).toBeUndefined();
  });

  test("limits, what is left, and a spent budget's reset", () => {
    const headers = new Headers({
      "x-ratelimit-limit-requests": "600",
      "x-ratelimit-limit-tokens": "150000",
      "x-ratelimit-remaining-requests": "0",
      "x-ratelimit-remaining-tokens": "149000",
      "x-ratelimit-reset-requests": "100ms",
      "x-ratelimit-reset-tokens": "400ms",
    });
    expect(readLimitReport(headers)).toEqual({ requestsPerMinute: 600, tokensPerMinute: 150000, remainingRequests: 0, remainingTokens: 149000, exhaustedForMs: 100 });
  });

  test("Brave's per-second and per-month windows", () => {
    const headers = new Headers({ "x-ratelimit-limit": "1, 15000", "x-ratelimit-remaining": "1, 0", "x-ratelimit-reset": "1, 86400" });
    expect(readLimitReport(headers)).toMatchObject({ requestsPerMinute: 60, exhaustedForMs: 86_400_000 });
  });

  test("a 429's delay: retry-after-ms, else retry-after, else the spent budget's reset", () => {
    expect(retryDelayOf(new Headers({ "retry-after-ms": "91", "retry-after": "1" }))).toBe(91);
    expect(retryDelayOf(new Headers({ "retry-after": "2" }))).toBe(2000);
    expect(retryDelayOf(new Headers({ "retry-after": new Date(10_000).toUTCString() }), 4_000)).toBe(6000);
    expect(retryDelayOf(new Headers({ "x-ratelimit-remaining-tokens": "0", "x-ratelimit-reset-tokens": "3s" }))).toBe(3000);
    expect(retryDelayOf(new Headers())).toBeUndefined();
  });
});

/** One call of account "a" asking the budget. */
const claim = (tokens: number) => [{ account: "a", weight: 1, tokens }];

/**
 * The shared budget, fair gate, breaker and account shares, on `where`'s Redis: the same on one
 * server and on a cluster, where every script's keys must share a hash slot.
 */
function pacingSuites(where: string, connect: () => Promise<{ redis: RedisConnection; stop(): Promise<void> }>) {
  describe(where, () => {
    let redis: RedisConnection;
    let stop: () => Promise<void>;
    beforeAll(async () => {
      ({ redis, stop } = await connect());
    }, 60_000);
    afterAll(() => stop());

    describe("a shared budget", () => {
      const limits = (rpm: number | null, tpm: number | null = null, calls: number | null = null) => ({ requestsPerMinute: rpm, tokensPerMinute: tpm, maxConcurrentCalls: calls });

      test("admits one second's worth at once, then paces to the limit (less its headroom)", async () => {
        const capacity = new ProviderCapacity(redis, prefix);
        const budget = `rpm-${crypto.randomUUID()}`;
        let admitted = 0;
        const started = performance.now();
        let refused = await capacity.admit(budget, limits(600), claim(0), "");
        for (; refused.admitted; refused = await capacity.admit(budget, limits(600), claim(0), "")) admitted++;
        // 600 a minute is 10 a second; paced at 95%, 9.5 fit in the first second's burst, and one
        // more each 105 ms the asking took (a loaded machine asks slowly).
        expect(admitted).toBeGreaterThanOrEqual(9);
        expect(admitted).toBeLessThanOrEqual(10 + Math.floor((performance.now() - started) / 105));
        if ("waitMs" in refused) expect(refused.waitMs).toBeGreaterThan(0);
      });

      test("a token budget admits a call larger than a second's worth once it is full, then makes the next wait", async () => {
        const capacity = new ProviderCapacity(redis, prefix);
        const budget = `tpm-${crypto.randomUUID()}`;
        expect((await capacity.admit(budget, limits(null, 6000), claim(5000), "")).admitted).toBe(true);
        const next = await capacity.admit(budget, limits(null, 6000), claim(10), "");
        expect(next.admitted).toBe(false);
        // Settling to fewer tokens than reserved gives the difference back.
        await capacity.settle(budget, limits(null, 6000), -5000, undefined);
        expect((await capacity.admit(budget, limits(null, 6000), claim(10), "")).admitted).toBe(true);
      });

      test("a cap on calls at once holds slots until they are settled", async () => {
        const capacity = new ProviderCapacity(redis, prefix);
        const budget = `calls-${crypto.randomUUID()}`;
        expect((await capacity.admit(budget, limits(null, null, 2), claim(0), "a")).admitted).toBe(true);
        expect((await capacity.admit(budget, limits(null, null, 2), claim(0), "b")).admitted).toBe(true);
        expect((await capacity.admit(budget, limits(null, null, 2), claim(0), "c")).admitted).toBe(false);
        await capacity.settle(budget, limits(null, null, 2), 0, "a");
        expect((await capacity.admit(budget, limits(null, null, 2), claim(0), "c")).admitted).toBe(true);
      });

      test("a 429 pauses the budget for every runner and teaches it the provider's limit", async () => {
        const one = new ProviderCapacity(redis, prefix);
        const other = new ProviderCapacity(redis, prefix);
        const budget = `pause-${crypto.randomUUID()}`;
        expect(await other.isUnbounded(budget, NO_LIMITS)).toBe(true);
        const state = await one.report(budget, { pauseMs: 60_000, requestsPerMinute: 500, refused: true });
        expect(state.learnedRequestsPerMinute).toBe(500);
        const refused = await other.admit(budget, NO_LIMITS, claim(0), "");
        expect(refused.admitted).toBe(false);
        if ("waitMs" in refused) expect(refused.waitMs).toBeGreaterThan(55_000);
      });

      test("a 429 without headers learns the pace reached, less a tenth, and a fifth less at each further one", async () => {
        const capacity = new ProviderCapacity(redis, prefix);
        const budget = `learn-${crypto.randomUUID()}`;
        for (let i = 0; i < 100; i++) capacity.countCall(budget);
        expect((await capacity.report(budget, { refused: true })).learnedRequestsPerMinute).toBe(90);
        expect((await capacity.report(budget, { refused: true })).learnedRequestsPerMinute).toBe(72);
      });

      test("a 429 without headers learns the pace of every replica together, not only the one refused", async () => {
        const replicas = [new ProviderCapacity(redis, prefix), new ProviderCapacity(redis, prefix), new ProviderCapacity(redis, prefix)];
        const budget = `learn-fleet-${crypto.randomUUID()}`;
        for (const replica of replicas) for (let i = 0; i < 100; i++) replica.countCall(budget);
        // The other replicas' counts reach Redis within their flush interval.
        await Bun.sleep(1200);
        expect((await replicas[0]!.report(budget, { refused: true })).learnedRequestsPerMinute).toBe(270);
      });
    });

    describe("the turns between accounts (kit/src/lua/fair-queuing.lua, as the worker slots' lines take them)", () => {
      /** The accounts of the next `n` calls admitted when "a" (weight 1) and "b" (weight 3) both ask, "a" first on a tie. */
      async function turns(capacity: ProviderCapacity, budget: string, n: number, accounts = ["a", "b"]): Promise<string[]> {
        const claims = accounts.map((account) => ({ account, weight: account === "b" ? 3 : 1, tokens: 0 }));
        const taken: string[] = [];
        for (let i = 0; i < n; i++) {
          const admission = await capacity.admit(budget, NO_LIMITS, claims, "");
          if (!admission.admitted) throw new Error(`not admitted: ${JSON.stringify(admission)}`);
          taken.push(claims[admission.index]!.account);
        }
        return taken;
      }

      test("an account that stops waiting and comes back at once joins at its own finish tag: it gains no turn", async () => {
        const capacity = new ProviderCapacity(redis, prefix);
        const budget = `newcomer-${crypto.randomUUID()}`;
        // Both join at the virtual time (0); "a" takes the tie, its next is due at 1.
        expect(await turns(capacity, budget, 1)).toEqual(["a"]);
        await capacity.leave(budget, "a");
        // Back at once, "a" waits for its own finish tag (1): "b", three times its weight, has
        // three turns first (0, 1/3, 2/3). Joining at the virtual time instead, it would go next.
        expect(await turns(capacity, budget, 4)).toEqual(["b", "b", "b", "a"]);
      });

      test("an account idle while another took turns joins at the virtual time: idle time earns no credit", async () => {
        const capacity = new ProviderCapacity(redis, prefix);
        const budget = `idle-${crypto.randomUUID()}`;
        expect(await turns(capacity, budget, 1)).toEqual(["a"]);
        await capacity.leave(budget, "a");
        // "b" alone for six turns (0 to 5/3): the virtual time reaches 5/3, past "a"'s finish tag (1).
        expect(await turns(capacity, budget, 6, ["b"])).toEqual(["b", "b", "b", "b", "b", "b"]);
        // "a" joins at 5/3, not at 1: one turn, then "b" (2, 7/3) before its next (8/3). At its own
        // tag, it would take two in a row (1 and 2, the tie).
        expect(await turns(capacity, budget, 4)).toEqual(["a", "b", "b", "a"]);
      });
      test("a plan change reaches the turns of an account that never stopped waiting, whichever runner grants them", async () => {
        const capacity = new ProviderCapacity(redis, prefix);
        const budget = `reweighed-${crypto.randomUUID()}`;
        const asks = (claims: { account: string; weight: number }[]) => capacity.admit(budget, NO_LIMITS, claims.map((c) => ({ ...c, tokens: 0 })), "");
        // Both wait at weight 1; then "b"'s plan becomes weight 3, said in the next claim its runner offers.
        await asks([{ account: "a", weight: 1 }, { account: "b", weight: 1 }]);
        await asks([{ account: "b", weight: 3 }]);
        // A runner holding only "a" asks on: "b"'s turns (still waiting, held elsewhere) are granted to it
        // at its new weight, three for each of "a"'s.
        let admittedA = 0;
        let grantedB = 0;
        for (let i = 0; i < 16; i++) {
          if ((await asks([{ account: "a", weight: 1 }])).admitted) admittedA++;
          else grantedB++;
        }
        expect(grantedB / admittedA).toBe(3);
      });
    });

    describe("the fair gate", () => {
      test("takes waiting calls round-robin by account, oldest article first within one", async () => {
        const capacity = new ProviderCapacity(redis, prefix);
        const budget = `fair-${crypto.randomUUID()}`;
        // One call at a time: the order the gate lets them through is the order they are admitted.
        const limits = { requestsPerMinute: null, tokensPerMinute: null, maxConcurrentCalls: 1 };
        const gate = new FairGate(capacity, budget, () => limits);
        const order: string[] = [];
        const pass = (account: string, since: number, name: string) =>
          gate.enter({ account, since, tokens: 0 }).then(async (admitted) => {
            order.push(name);
            await capacity.settle(budget, limits, 0, admitted.leaseId);
          });
        await Promise.all([pass("a", 1, "a1"), pass("a", 3, "a3"), pass("a", 2, "a2"), pass("a", 4, "a4"), pass("b", 9, "b9")]);
        // a1 is let through first (it came first), then the turn passes to b before a's others.
        expect(order).toEqual(["a1", "b9", "a2", "a3", "a4"]);
      });

      /**
       * Runners (one FairGate each, as replicas would have) holding `calls` of each account, on one
       * budget of `rpm`: the accounts of the first `counted` calls admitted, in order.
       */
      async function shares(rpm: number, runners: { account: string; weight: number }[][], calls: number, counted: number): Promise<string[]> {
        const budget = `fleet-${crypto.randomUUID()}`;
        const limits = { requestsPerMinute: rpm, tokensPerMinute: null, maxConcurrentCalls: null };
        const order: string[] = [];
        const entered: Promise<unknown>[] = [];
        for (const accounts of runners) {
          const gate = new FairGate(new ProviderCapacity(redis, prefix), budget, () => limits);
          for (let i = 0; i < calls; i++) {
            for (const { account, weight } of accounts) entered.push(gate.enter({ account, weight, since: i, tokens: 0 }).then(() => order.push(account)));
          }
        }
        await Promise.all(entered);
        return order.slice(0, counted);
      }
      const countOf = (order: string[], account: string) => order.filter((a) => a === account).length;

      test("two accounts on two runners with weights 3 and 1 share one budget 3:1", async () => {
        const order = await shares(24_000, [[{ account: "heavy", weight: 3 }], [{ account: "light", weight: 1 }]], 400, 400);
        const ratio = countOf(order, "heavy") / countOf(order, "light");
        expect(ratio).toBeGreaterThan(3 * 0.9);
        expect(ratio).toBeLessThan(3 * 1.1);
      });

      test("an account spread over two runners gets the same share as one held by a single runner", async () => {
        const order = await shares(24_000, [[{ account: "spread", weight: 1 }, { account: "single", weight: 1 }], [{ account: "spread", weight: 1 }]], 200, 300);
        const ratio = countOf(order, "spread") / countOf(order, "single");
        expect(ratio).toBeGreaterThan(0.9);
        expect(ratio).toBeLessThan(1.1);
      });

      const parking = (article: string) => ({ article, park: async () => { throw new Error("unused"); }, outageEnded: async () => {} });

      test("a call that waits past PARK_AFTER_MS is parked; its turn wakes its job, whose call then goes at once", async () => {
        const capacity = new ProviderCapacity(redis, prefix);
        const budget = `park-${crypto.randomUUID()}`;
        // One call at a time, and the first holds its slot: the second waits, then parks.
        const limits = { requestsPerMinute: null, tokensPerMinute: null, maxConcurrentCalls: 1 };
        const woken: string[] = [];
        const gate = new FairGate(capacity, budget, () => limits, async (article) => void woken.push(article));
        const first = await gate.enter({ account: "a", since: 1, tokens: 0 });
        const second = gate.enter({ account: "a", since: 2, tokens: 0, parking: parking("article-2") });
        expect(await second.then(() => "admitted", (error) => (error as Error).name)).toBe("CallParked");
        expect(woken).toEqual([]);
        // The first call ends: the parked article's turn comes and its job is woken, marked for its turn.
        await capacity.settle(budget, limits, 0, first.leaseId);
        await eventually(async () => woken, (w) => w.length === 1, 5000, "the parked article woken");
        expect(woken).toEqual(["article-2"]);
        expect(await capacity.takeWoken(budget, "article-2")).toBe(true);
        // Asked once: the next look finds no mark.
        expect(await capacity.takeWoken(budget, "article-2")).toBe(false);
        const back = await gate.enter({ account: "a", since: 2, tokens: 0, parking: parking("article-2") }, { woken: true });
        expect(back.waitedMs).toBeLessThan(500);
      });

      test("parked articles are woken at the budget's pace, each owed its request until its call is made", async () => {
        const capacity = new ProviderCapacity(redis, prefix);
        const budget = `wakes-${crypto.randomUUID()}`;
        // 600 a minute at 95%: a second's burst of 9.5 requests, then one every 105 ms.
        const limits = { requestsPerMinute: 600, tokensPerMinute: null, maxConcurrentCalls: null };
        const woken: number[] = [];
        const calls: Promise<unknown>[] = [];
        const started = Date.now();
        // A woken job comes back 100 ms later and makes its call, which goes without a new turn.
        const gate: FairGate = new FairGate(capacity, budget, () => limits, async (article) => {
          woken.push(Date.now() - started);
          calls.push(Bun.sleep(100).then(async () => gate.enter({ account: "a", since: 0, tokens: 0, parking: parking(article) }, { woken: await capacity.takeWoken(budget, article) })));
        });
        for (let i = 0; i < 30; i++) gate.enterParked({ account: "a", since: i, tokens: 0, parking: parking(`article-${i}`) });
        await eventually(async () => woken.length, (n) => n === 30, 15_000, "every parked article woken");
        await Promise.all(calls);
        // Not all at once: as many as the budget has room for over the next second (about 10),
        // then one every 105 ms as their calls are made (20 more take 2.1 s).
        expect(woken.filter((ms) => ms < 500).length).toBeLessThanOrEqual(15);
        expect(woken.at(-1)!).toBeGreaterThan(1800);
      });

      test("a call that leaves while the budget is asked gives back the tokens it was admitted with, with no cap on calls at once", async () => {
        const budget = `abandoned-${crypto.randomUUID()}`;
        const limits = { requestsPerMinute: null, tokensPerMinute: 6000, maxConcurrentCalls: null };
        const leaving = new AbortController();
        // The call is aborted while its admission is on its way back from Redis.
        class AbortingCapacity extends ProviderCapacity {
          override async admit(...args: Parameters<ProviderCapacity["admit"]>) {
            const admission = await super.admit(...args);
            leaving.abort(new Error("the article was cancelled"));
            return admission;
          }
        }
        const gate = new FairGate(new AbortingCapacity(redis, prefix), budget, () => limits);
        const abandoned = await gate.enter({ account: "a", since: 1, tokens: 5000, signal: leaving.signal }).then(() => "admitted", (error) => (error as Error).message);
        expect(abandoned).toBe("the article was cancelled");
        // Its 5,000 tokens are back: another call of 5,000 fits in the budget of 6,000 a minute.
        const capacity = new ProviderCapacity(redis, prefix);
        await eventually(async () => (await capacity.admit(budget, limits, claim(5000), "")).admitted, (admitted) => admitted, 5000, "the abandoned call's tokens given back");
      });

      test("an account alone gets the whole budget", async () => {
        const started = Date.now();
        // 6,000 a minute at 95%: a second's burst (95 calls) at once, then one call every 10.5 ms.
        const order = await shares(6000, [[{ account: "alone", weight: 1 }], [{ account: "alone", weight: 1 }]], 100, 200);
        const tookMs = Date.now() - started;
        expect(order).toHaveLength(200);
        expect(tookMs).toBeLessThan(((200 - 95) / 95) * 1000 * 1.3);
      });
    });

    describe("the circuit breaker", () => {
      test("opens after five failures in a row for every runner; one caller probes; success closes it", async () => {
        const model = `model-${crypto.randomUUID()}`;
        const one = new CircuitBreakers(redis, prefix, 200);
        const other = new CircuitBreakers(redis, prefix, 200);
        for (let i = 1; i < FAILURES_TO_OPEN; i++) expect((await one.failed(model, false)).open).toBe(false);
        expect((await one.failed(model, false)).open).toBe(true);
        expect((await one.pass(model)).go).toBe(false);
        // Open for the other runner too, which saw none of the failures.
        expect(await other.pass(model)).toMatchObject({ go: false, probe: false });
        await Bun.sleep(250);
        const passes = await Promise.all([one.pass(model), one.pass(model)]);
        expect(passes.filter((p) => p.probe)).toHaveLength(1);
        await one.succeeded(model, { streak: true });
        expect(await other.pass(model)).toMatchObject({ go: true, probe: false, streak: false });
      });

      test("a replica that never saw the model fail sends no call into the breaker another replica opened", async () => {
        const model = `model-${crypto.randomUUID()}`;
        const failing = new CircuitBreakers(redis, prefix, 60_000);
        const fresh = new CircuitBreakers(redis, prefix, 60_000);
        expect(await fresh.pass(model)).toMatchObject({ go: true, streak: false });
        for (let i = 0; i < FAILURES_TO_OPEN; i++) await failing.failed(model, false);
        expect(await fresh.pass(model)).toMatchObject({ go: false, probe: false });
      });

      test("a success on any replica ends the failure streak another replica started", async () => {
        const model = `model-${crypto.randomUUID()}`;
        const failing = new CircuitBreakers(redis, prefix, 60_000);
        const other = new CircuitBreakers(redis, prefix, 60_000);
        for (let i = 1; i < FAILURES_TO_OPEN; i++) await failing.failed(model, false);
        const passage = await other.pass(model);
        expect(passage).toMatchObject({ go: true, streak: true });
        await other.succeeded(model, passage);
        // The streak starts over: one more failure does not open the breaker.
        expect((await failing.failed(model, false)).open).toBe(false);
      });

      test("failed probes double the cool-down only up to the probe cadence's bound, with jitter", async () => {
        const model = `model-${crypto.randomUUID()}`;
        const breakers = new CircuitBreakers(redis, prefix, 500);
        for (let i = 1; i < FAILURES_TO_OPEN; i++) await breakers.failed(model, false);
        const waits: number[] = [];
        const opened = await breakers.failed(model, false);
        if (opened.open) waits.push(opened.retryInMs);
        for (let probe = 0; probe < 6; probe++) {
          const state = await breakers.failed(model, true);
          if (state.open) waits.push(state.retryInMs);
        }
        expect(waits).toHaveLength(7);
        // 0.5, 1, then 2 s at most (the bound), each plus up to a fifth of it in jitter.
        expect(waits[0]).toBeGreaterThanOrEqual(490);
        expect(waits[0]).toBeLessThanOrEqual(600);
        expect(waits[1]).toBeGreaterThanOrEqual(990);
        expect(waits[1]).toBeLessThanOrEqual(1100);
        for (const wait of waits.slice(2)) {
          expect(wait).toBeGreaterThanOrEqual(MAX_PROBE_GAP_MS - 10);
          expect(wait).toBeLessThanOrEqual(MAX_PROBE_GAP_MS + 400);
        }
      });
    });

    describe("account shares", () => {
      test("an account over its cap waits in line, oldest first, and the next goes when one ends", async () => {
        const woken: string[] = [];
        const shares = new AccountShares(redis, prefix, { defaultCap: 2, shareOf: async () => ({ weight: 1 }), wake: async (id) => (woken.push(id), true) });
        const account = `acct-${crypto.randomUUID()}`;
        expect(await shares.take(account, "a", 1)).toBe(true);
        expect(await shares.take(account, "b", 2)).toBe(true);
        expect(await shares.take(account, "d", 4)).toBe(false);
        expect(await shares.take(account, "c", 3)).toBe(false);
        // Another account is not held up by this one.
        expect(await shares.take(`other-${account}`, "x", 5)).toBe(true);
        await shares.release(account, "a");
        expect(woken).toEqual(["c"]);
        // The woken article holds its place: its own take succeeds, a newcomer's does not.
        expect(await shares.take(account, "c", 3)).toBe(true);
        expect(await shares.take(account, "e", 6)).toBe(false);
        shares.stop();
      });
    });
  });
}

pacingSuites("one Redis", async () => {
  const redis = connectRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
  return {
    redis,
    async stop() {
      await dropTestData("postgres://postgres@127.0.0.1:5432/none", prefix);
      redis.disconnect();
    },
  };
});

pacingSuites("a Redis Cluster of three masters", async () => {
  const cluster = await startRedisCluster(3);
  // The runner's pacing connection is auto-pipelined, as here; a cluster client has the commands it uses.
  return { redis: cluster.connect({ enableAutoPipelining: true }), stop: () => cluster.stop() };
});
