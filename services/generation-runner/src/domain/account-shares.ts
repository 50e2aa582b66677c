// Fair shares of the runners between accounts: each account keeps at most its cap of articles in
// flight (its plan's `articles_in_flight`, else RUNNER_ACCOUNT_IN_FLIGHT), counted in Redis
// across every runner replica. An article over its account's cap is parked (its job delayed,
// holding no worker slot) in the account's line, oldest first; when one of the account's
// articles ends, the next in line takes its place at once. So one account's burst of thousands
// leaves the runners' slots to the others, and within the provider budgets the calls of the
// accounts in flight take turns (fair-gate.ts).
//
// A slot is a lease renewed while the article runs: a runner that dies gives its slots back
// within LEASE_MS. A parked job also wakes by itself after PARK_MS, in case the place it was
// given was lost with a runner.
import type IORedis from "ioredis";
import { redisKey } from "../../../kit/src/redis.ts";
import { redisScript } from "../../../kit/src/redis-scripts.ts";

const LEASE_MS = 120_000;
const RENEW_EVERY_MS = 30_000;
/** A parked article looks again by itself after this long. */
export const PARK_MS = 60_000;
/** How long an account's cap is remembered before it is asked again. */
const CAP_MEMORY_MS = 10_000;

const NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

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

export interface AccountSharesOptions {
  /** Articles in flight per account when its plan sets none. */
  defaultCap: number;
  /** The account's plan's cap, undefined when it sets none. */
  capOf(account: string): Promise<number | undefined>;
  /** Wakes a parked article's job at once (its turn came). */
  wake(externalId: string): Promise<boolean>;
}

export class AccountShares {
  /** Articles this runner has in flight, with their account: their leases are renewed. */
  private readonly held = new Map<string, string>();
  private readonly caps = new Map<string, { cap: number; until: number }>();
  private readonly renewal: ReturnType<typeof setInterval>;

  constructor(
    private readonly redis: IORedis,
    private readonly redisPrefix: string,
    private readonly options: AccountSharesOptions,
  ) {
    this.renewal = setInterval(() => void this.renew().catch(() => {}), RENEW_EVERY_MS);
    this.renewal.unref?.();
  }

  private keys(account: string): [string, string] {
    const base = redisKey(this.redisPrefix, "share", account);
    return [`${base}:running`, `${base}:waiting`];
  }

  private async cap(account: string): Promise<number> {
    const known = this.caps.get(account);
    if (known && known.until > Date.now()) return known.cap;
    const cap = (await this.options.capOf(account).catch(() => known?.cap)) ?? this.options.defaultCap;
    this.caps.set(account, { cap, until: Date.now() + CAP_MEMORY_MS });
    return cap;
  }

  /** Takes a slot of the account for the article; false: it was put in the account's line. */
  async take(account: string, externalId: string, since: number): Promise<boolean> {
    const taken = (await takeScript.run(this.redis, this.keys(account), [externalId, await this.cap(account), LEASE_MS, since])) === 1;
    if (taken) this.held.set(externalId, account);
    return taken;
  }

  /** Whether the article holds a slot of the account (one was given it while it waited in line). */
  async holds(account: string, externalId: string): Promise<boolean> {
    return (await this.redis.zscore(this.keys(account)[0], externalId)) !== null;
  }

  /** Gives the article's slot back and wakes whoever's turn it is now. */
  async release(account: string, externalId: string): Promise<void> {
    this.held.delete(externalId);
    let leaving = externalId;
    // A woken article whose job is gone (cancelled, removed) gives its place on at once.
    for (let round = 0; round < 10; round++) {
      const admitted = (await releaseScript.run(this.redis, this.keys(account), [leaving, await this.cap(account), LEASE_MS])) as string[];
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
    const batch = this.redis.pipeline();
    for (const [externalId, account] of this.held) batch.zadd(this.keys(account)[0], "XX", until, externalId);
    await batch.exec();
  }

  stop(): void {
    clearInterval(this.renewal);
  }
}
