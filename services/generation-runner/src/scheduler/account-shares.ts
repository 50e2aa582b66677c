// What an account's plan says about its share of the runners: its weight in the fair turns between
// accounts, for the fleet's worker slots (kit/src/fair-dispatch.ts) and for the provider budgets
// (fair-gate.ts) (the plan's share_weight, 1 by default), and optionally a cap
// on its articles in flight (the plan's articles_in_flight; RUNNER_ACCOUNT_IN_FLIGHT for plans
// without one, unset by default: no cap). Fairness between accounts is the weights' work; a cap is
// an explicit limit of a plan, never needed for fairness, so an account alone gets every idle slot.
//
// Under a cap, the count is kept in Redis across every runner replica. An article over its
// account's cap is parked (its job delayed, holding no worker slot) in the account's line, oldest
// first; when one of the account's articles ends, the next in line takes its place at once.
//
// An account's share is remembered for SHARE_MEMORY_MS; a change of its plan's weight is applied
// as accounts-billing announces it (kit/src/plan-weights.ts), not at the memory's expiry.
//
// A slot is a lease renewed while the article runs: a runner that dies gives its slots back
// within LEASE_MS. A parked job also wakes by itself after PARK_MS, in case the place it was
// given was lost with a runner.
import { slotKey, type RedisConnection } from "../../../kit/src/redis.ts";
import { LUA_CLOCK, redisScript } from "../../../kit/src/redis-scripts.ts";

const LEASE_MS = 120_000;
const RENEW_EVERY_MS = 30_000;
/** A parked article looks again by itself after this long. */
export const PARK_MS = 60_000;
/** How long an account's share is remembered before it is asked again. */
const SHARE_MEMORY_MS = 10_000;

const NOW = `${LUA_CLOCK}
local now = clock_ms()`;

// KEYS: running, waiting. ARGV: article, cap, lease ms, since. 1: taken; 0: parked in line.
const takeScript = redisScript(`${NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
  redis.call('ZREM', KEYS[2], ARGV[1])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
  return 1
end
redis.call('ZADD', KEYS[2], 'NX', tonumber(ARGV[4]), ARGV[1])
redis.call('PEXPIRE', KEYS[2], 604800000)
return 0
`);

// KEYS: running, waiting. ARGV: article (or ''), cap, lease ms. Frees the article's slot and gives
// free slots to the oldest in line; returns the articles let in.
const releaseScript = redisScript(`${NOW}
if ARGV[1] ~= '' then redis.call('ZREM', KEYS[1], ARGV[1]) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local admitted = {}
while redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) do
  local next = redis.call('ZRANGE', KEYS[2], 0, 0)[1]
  if not next then break end
  redis.call('ZREM', KEYS[2], next)
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), next)
  admitted[#admitted + 1] = next
end
if #admitted > 0 then redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3])) end
return admitted
`);

/** An account's share as its plan sets it. */
export interface AccountShare {
  /** Articles in flight at most; undefined: no cap of its own. */
  cap?: number;
  /** Its weight in the fair shares between accounts (1 to 100). */
  weight: number;
}

export interface AccountSharesOptions {
  /** Articles in flight per account when its plan sets none; undefined: no cap. */
  defaultCap?: number;
  /** The account's plan's share. */
  shareOf(account: string): Promise<AccountShare>;
  /** Wakes a parked article's job at once (its turn came). */
  wake(externalId: string): Promise<boolean>;
}

export class AccountShares {
  /** Articles this runner has in flight, with their account: their leases are renewed. */
  private readonly held = new Map<string, string>();
  private readonly shares = new Map<string, AccountShare & { until: number }>();
  private readonly renewal: ReturnType<typeof setInterval>;

  constructor(
    private readonly redis: RedisConnection,
    private readonly redisPrefix: string,
    private readonly options: AccountSharesOptions,
  ) {
    this.renewal = setInterval(() => void this.renew().catch(() => {}), RENEW_EVERY_MS);
    this.renewal.unref?.();
  }

  private keys(account: string): [string, string] {
    const base = slotKey(this.redisPrefix, "share", account);
    return [`${base}:running`, `${base}:waiting`];
  }

  /** The account's share, as its plan said at most SHARE_MEMORY_MS ago (as last known while accounts-billing is away). */
  async share(account: string): Promise<AccountShare> {
    const known = this.shares.get(account);
    if (known && known.until > Date.now()) return known;
    const share: AccountShare = await this.options.shareOf(account).catch(() => known ?? { weight: 1 });
    const kept = { cap: share.cap ?? this.options.defaultCap, weight: share.weight, until: Date.now() + SHARE_MEMORY_MS };
    this.shares.set(account, kept);
    return kept;
  }

  /** Its plan's weight changed: the account's next claims carry it, and its cap is asked again at the next look. */
  planChanged(account: string, weight: number): void {
    this.shares.set(account, { cap: this.shares.get(account)?.cap, weight, until: 0 });
  }

  /** Takes a slot of the account for the article; false: it was put in the account's line. Always true without a cap. */
  async take(account: string, externalId: string, since: number): Promise<boolean> {
    const { cap } = await this.share(account);
    if (cap === undefined) return true;
    const taken = (await takeScript.run(this.redis, this.keys(account), [externalId, cap, LEASE_MS, since])) === 1;
    if (taken) this.held.set(externalId, account);
    return taken;
  }

  /** Whether the article holds a slot of the account (one was given it while it waited in line). */
  async holds(account: string, externalId: string): Promise<boolean> {
    return (await this.redis.zscore(this.keys(account)[0], externalId)) !== null;
  }

  /** Gives the article's slot back and wakes whoever's turn it is now. */
  async release(account: string, externalId: string): Promise<void> {
    if (!this.held.delete(externalId)) return;
    const { cap } = await this.share(account);
    // The plan's cap was lifted meanwhile: every article still in line goes now.
    const free = cap ?? Number.MAX_SAFE_INTEGER;
    let leaving = externalId;
    // A woken article whose job is gone (cancelled, removed) gives its place on at once.
    for (let round = 0; round < 10; round++) {
      const admitted = (await releaseScript.run(this.redis, this.keys(account), [leaving, free, LEASE_MS])) as string[];
      const gone: string[] = [];
      for (const id of admitted) if (!(await this.options.wake(id).catch(() => true))) gone.push(id);
      if (gone.length === 0) return;
      leaving = gone.shift()!;
      for (const id of gone) await this.redis.zrem(this.keys(account)[0], id);
    }
  }

  private async renew(): Promise<void> {
    if (this.held.size === 0) return;
    const until = Date.now() + LEASE_MS;
    // One command each, not a pipeline: on a cluster the accounts' keys live in different slots.
    await Promise.all([...this.held].map(([externalId, account]) => this.redis.zadd(this.keys(account)[0], "XX", until, externalId)));
  }

  stop(): void {
    clearInterval(this.renewal);
  }
}
