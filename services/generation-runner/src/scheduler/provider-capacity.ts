// One budget per model (or search provider) in Redis, shared by every runner replica: the
// provider's requests and tokens per minute and a cap on calls at once. A call is admitted only
// when the budget allows it (GCRA for requests, a token bucket that may run into debt for tokens,
// so a call larger than a second's worth still goes once the bucket is full), reserving its
// estimated tokens; it settles to the real usage afterwards. A 429, or a budget the provider
// reports empty, pauses the whole budget for the time the provider gives.
//
// The limits are the operator's (the model catalog) or, where the provider reports tighter ones in
// its x-ratelimit-* headers, the provider's; with neither, the runner learns them: from the
// headers, else from 429s (the pace every replica together had reached, less a tenth; less a fifth at each further
// 429; a tenth more after each quiet minute). Budgets are enforced over one second, as providers
// enforce theirs, and paced at HEADROOM of the limit so clocks and network jitter do not cross it.
import { slotKey, type RedisConnection } from "../../../kit/src/redis.ts";
import { LUA_CLOCK, redisScript } from "../../../kit/src/redis-scripts.ts";
import FAIR_QUEUING from "../../../kit/src/lua/fair-queuing.lua" with { type: "text" };
import BUDGET_LIMITS from "./lua/budget-limits.lua" with { type: "text" };
import ADMIT from "./lua/budget-admit.lua" with { type: "text" };
import LEAVE from "./lua/budget-leave.lua" with { type: "text" };
import SETTLE from "./lua/budget-settle.lua" with { type: "text" };
import REPORT from "./lua/budget-report.lua" with { type: "text" };

export interface ConfiguredLimits {
  requestsPerMinute: number | null;
  tokensPerMinute: number | null;
  maxConcurrentCalls: number | null;
}

export const NO_LIMITS: ConfiguredLimits = { requestsPerMinute: null, tokensPerMinute: null, maxConcurrentCalls: null };

/** The share of a limit the runner paces at. */
export const HEADROOM = 0.95;
/** The burst a budget allows: one second's worth, as providers enforce their per-minute limits over seconds. */
const BURST_MS = 1000;
/** A call's hold on a concurrency slot ends by itself after this long (a runner that died). */
export const LEASE_MS = 15 * 60_000;
/** Calls are counted for the whole fleet in buckets of this long, sent at most this often. */
const COUNT_BUCKET_MS = 10_000;
const COUNT_FLUSH_MS = 1000;
/** A budget nobody used for an hour is forgotten, with what it learned. */
const BUDGET_TTL_MS = 3_600_000;

/** A call let through, a parked article to wake (its turn came), or how long to wait before asking again. */
export type Admission = { admitted: true; wake?: false; index: number } | { admitted: false; wake: true; index: number } | { admitted: false; wake?: false; waitMs: number };

/**
 * A claim on the budget: its account, the account's weight in the fair shares, its estimated
 * tokens, and the parked article it stands for (`wake`) or the woken article whose call it is
 * (`woken`), if any.
 */
export interface Claim {
  account: string;
  weight: number;
  tokens: number;
  wake?: string;
  woken?: string;
}

/** How long a woken article is owed its request: a job that does not come back by then gives it up. */
const WOKEN_MS = 60_000;
/**
 * How far ahead of the budget's room parked articles are woken: their jobs' way back (a pickup,
 * the run's reads). Longer keeps a busier budget full on a slow runner; the calls woken ahead are
 * those whose order within the fair shares is only roughly kept.
 */
const WAKE_AHEAD_MS = 1000;
/** How long an account stays among those waiting after its runner last asked for it (a runner that died). */
const PRESENCE_MS = 3000;

// Shared by the scripts: the server's clock in ms, and the effective limit (lua/budget-limits.lua).
const PRELUDE = `
${LUA_CLOCK}
local now = clock_ms()
${BUDGET_LIMITS}
`;

// KEYS: budget hash, leases zset, then the fair shares' heads, tags, presence, weights, grants,
// live accounts and woken articles; its arguments and rule in lua/budget-admit.lua, its turns
// those of the worker slots' lines (kit/src/lua/fair-queuing.lua).
const admitScript = redisScript(`${PRELUDE}\n${FAIR_QUEUING}\n${ADMIT}`);

// KEYS: fair heads zset, fair presence zset, grants hash (lua/budget-leave.lua).
const leaveScript = redisScript(LEAVE);

// KEYS: budget hash, leases zset (lua/budget-settle.lua).
const settleScript = redisScript(`${PRELUDE}\n${SETTLE}`);

// KEYS: budget hash (lua/budget-report.lua).
const reportScript = redisScript(`${PRELUDE}\n${REPORT}`);

/** What a budget holds now, as this runner last read it. */
export interface BudgetState {
  learnedRequestsPerMinute: number;
  learnedTokensPerMinute: number;
  pausedUntil: number;
  readAt: number;
}

const limitOf = (n: number | null) => (n && n > 0 ? n : 0);

export class ProviderCapacity {
  private readonly states = new Map<string, BudgetState>();
  /** Calls counted but not yet sent to Redis: per budget, per bucket of COUNT_BUCKET_MS. */
  private readonly uncounted = new Map<string, Map<number, number>>();
  private countFlush: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly redis: RedisConnection,
    private readonly redisPrefix: string,
  ) {}

  private keys(budget: string): [string, string] {
    const base = slotKey(this.redisPrefix, "capacity", budget);
    return [base, `${base}:calls`];
  }

  /** Whether calls on this budget can skip Redis: no limit configured, none learned, no pause (as read at most a second ago). */
  async isUnbounded(budget: string, limits: ConfiguredLimits): Promise<boolean> {
    if (limitOf(limits.requestsPerMinute) || limitOf(limits.tokensPerMinute) || limitOf(limits.maxConcurrentCalls)) return false;
    const state = await this.state(budget);
    return state.learnedRequestsPerMinute === 0 && state.learnedTokensPerMinute === 0 && state.pausedUntil <= Date.now();
  }

  async state(budget: string): Promise<BudgetState> {
    const known = this.states.get(budget);
    if (known && Date.now() - known.readAt < 1000) return known;
    const [rpm, tpm, pause] = await this.redis.hmget(this.keys(budget)[0], "learned_rpm", "learned_tpm", "pause_until");
    return this.remember(budget, [rpm, tpm, pause]);
  }

  private remember(budget: string, [rpm, tpm, pause]: (string | null)[]): BudgetState {
    const state = { learnedRequestsPerMinute: Number(rpm ?? 0), learnedTokensPerMinute: Number(tpm ?? 0), pausedUntil: Number(pause ?? 0), readAt: Date.now() };
    this.states.set(budget, state);
    return state;
  }

  /**
   * Admits one of the claims (the heads of this runner's lines, one per account): the one whose
   * account's turn it is over the whole fleet, when the budget allows a call now. A parked
   * article's claim is not admitted but woken, owed its request until its job comes back. A call
   * let through holds concurrency slot `leaseId` when the budget caps calls at once.
   */
  async admit(budget: string, limits: ConfiguredLimits, claims: Claim[], leaseId: string): Promise<Admission> {
    const args = {
      rpm: limitOf(limits.requestsPerMinute),
      tpm: limitOf(limits.tokensPerMinute),
      maxConcurrent: limitOf(limits.maxConcurrentCalls),
      leaseId,
      leaseMs: LEASE_MS,
      burstMs: BURST_MS,
      headroom: HEADROOM,
      ttlMs: BUDGET_TTL_MS,
      presenceMs: PRESENCE_MS,
      wokenMs: WOKEN_MS,
      wakeAheadMs: WAKE_AHEAD_MS,
      claims: claims.map((claim) => ({
        account: claim.account,
        weight: Math.max(claim.weight, 1),
        tokens: Math.max(0, Math.round(claim.tokens)),
        kind: claim.wake ? `w:${claim.wake}` : claim.woken ? `t:${claim.woken}` : "c",
      })),
    };
    const [code, value] = (await admitScript.run(this.redis, [...this.keys(budget), ...this.fairKeys(budget)], [JSON.stringify(args)])) as [number, number];
    if (code === 2) return { admitted: false, wake: true, index: value };
    if (code !== 1) return { admitted: false, waitMs: value };
    this.countCall(budget);
    return { admitted: true, index: value };
  }

  /** Notes that a parked article was woken for its turn: its call skips the line when it comes back for it. */
  async markWoken(budget: string, article: string): Promise<void> {
    await this.redis.set(this.wokenKey(budget, article), "1", "PX", WOKEN_MS);
  }

  /** Whether the article was woken for its turn (the mark is taken: asked once). */
  async takeWoken(budget: string, article: string): Promise<boolean> {
    return (await this.redis.getdel(this.wokenKey(budget, article))) !== null;
  }

  private wokenKey(budget: string, article: string): string {
    return `${this.keys(budget)[0]}:woken:${article}`;
  }

  /** The account has no call waiting for the budget in this runner any more. */
  async leave(budget: string, account: string): Promise<void> {
    const [heads, , present, , grants] = this.fairKeys(budget);
    await leaveScript.run(this.redis, [heads, present, grants], [JSON.stringify({ account })]);
  }

  private fairKeys(budget: string): [string, string, string, string, string, string, string] {
    const base = `${this.keys(budget)[0]}:fair`;
    return [`${base}:heads`, `${base}:tags`, `${base}:present`, `${base}:weights`, `${base}:grants`, `${base}:live`, `${base}:woken`];
  }

  /**
   * Counts a call on the budget, in Redis for the whole fleet, so a 429 without headers learns the
   * pace every replica together had reached. Counts are sent in one pipeline a second at most.
   */
  countCall(budget: string): void {
    const bucket = Math.floor(Date.now() / COUNT_BUCKET_MS);
    let buckets = this.uncounted.get(budget);
    if (!buckets) this.uncounted.set(budget, (buckets = new Map()));
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + 1);
    if (!this.countFlush) {
      this.countFlush = setTimeout(() => void this.sendCounts().catch(() => {}), COUNT_FLUSH_MS);
      this.countFlush.unref?.();
    }
  }

  private async sendCounts(): Promise<void> {
    clearTimeout(this.countFlush);
    this.countFlush = undefined;
    if (this.uncounted.size === 0) return;
    // One command each, not a pipeline: on a cluster the budgets' keys live in different slots
    // (the connection's auto-pipelining still sends them together).
    const sent: Promise<unknown>[] = [];
    for (const [budget, buckets] of this.uncounted) {
      for (const [bucket, n] of buckets) {
        const key = this.countKey(budget, bucket);
        sent.push(this.redis.incrby(key, n), this.redis.pexpire(key, 60_000 + 2 * COUNT_BUCKET_MS));
      }
    }
    this.uncounted.clear();
    await Promise.all(sent);
  }

  private countKey(budget: string, bucket: number): string {
    return `${this.keys(budget)[0]}:count:${bucket}`;
  }

  /** Calls every replica made on the budget in the last minute (the oldest bucket prorated). */
  private async callsInLastMinute(budget: string): Promise<number> {
    await this.sendCounts();
    const since = Date.now() - 60_000;
    const first = Math.floor(since / COUNT_BUCKET_MS);
    const last = Math.floor(Date.now() / COUNT_BUCKET_MS);
    const keys = Array.from({ length: last - first + 1 }, (_, i) => this.countKey(budget, first + i));
    const counts = (await this.redis.mget(...keys)).map((n) => Number(n ?? 0));
    const firstShare = ((first + 1) * COUNT_BUCKET_MS - since) / COUNT_BUCKET_MS;
    return Math.round(counts.reduce((sum, n, i) => sum + (i === 0 ? n * firstShare : n), 0));
  }

  /** Settles a call's reservation to the tokens it really used and frees its concurrency slot. */
  async settle(budget: string, limits: ConfiguredLimits, tokenDifference: number, leaseId: string | undefined): Promise<void> {
    if (tokenDifference === 0 && leaseId === undefined) return;
    const args = { tokenDifference: Math.round(tokenDifference), tpm: limitOf(limits.tokensPerMinute), headroom: HEADROOM, leaseId: leaseId ?? "" };
    await settleScript.run(this.redis, this.keys(budget), [JSON.stringify(args)]);
  }

  /**
   * What an answer said about the budget: the limits the provider reports, a pause (a 429's
   * retry delay, or a budget reported empty until its reset). `refused` is a 429.
   */
  async report(budget: string, report: { pauseMs?: number; requestsPerMinute?: number; tokensPerMinute?: number; refused: boolean }): Promise<BudgetState> {
    const args = {
      pauseMs: Math.max(0, Math.ceil(report.pauseMs ?? 0)),
      rpm: report.requestsPerMinute ?? 0,
      tpm: report.tokensPerMinute ?? 0,
      refused: report.refused,
      callsLastMinute: await this.callsInLastMinute(budget),
      ttlMs: BUDGET_TTL_MS,
    };
    const reply = (await reportScript.run(this.redis, [this.keys(budget)[0]], [JSON.stringify(args)])) as (string | null)[];
    return this.remember(budget, reply);
  }

  /** Whether a report changes what this runner knows (so an answer that repeats it costs no Redis call). */
  isNews(budget: string, report: { requestsPerMinute?: number; tokensPerMinute?: number; exhaustedForMs?: number }): boolean {
    const known = this.states.get(budget);
    if (report.exhaustedForMs !== undefined) return true;
    if (!known) return report.requestsPerMinute !== undefined || report.tokensPerMinute !== undefined;
    return (report.requestsPerMinute !== undefined && report.requestsPerMinute !== known.learnedRequestsPerMinute) ||
      (report.tokensPerMinute !== undefined && report.tokensPerMinute !== known.learnedTokensPerMinute);
  }
}
