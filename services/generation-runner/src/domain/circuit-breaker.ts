// One circuit breaker per model, in Redis, and every call of every runner replica asks it (one
// small script per call on an auto-pipelined connection): a replica that has not seen the model
// fail itself never sends a call into an open breaker. A model that failed FAILURES_TO_OPEN times
// in a row (server errors, timeouts, broken connections; a success anywhere resets the count)
// opens: its calls go to the catalog's fallback model, or wait. Once the cool-down has passed, one
// caller of the whole fleet (whoever takes the probe) tries the model again: success closes the
// breaker for everyone, failure opens it again for twice as long, up to the probe cadence's bound
// (MAX_PROBE_GAP_MS, or the first cool-down when that is longer), with jitter so replicas that all
// wait do not probe in step. A provider that answers again is noticed within about that bound. A
// call never fails for the breaker itself; how long one may wait is the runner's outage bound
// (PROVIDER_OUTAGE_LIMIT_MS).
import { slotKey, type RedisConnection } from "../../../kit/src/redis.ts";
import { LUA_CLOCK, redisScript } from "../../../kit/src/redis-scripts.ts";

export const FAILURES_TO_OPEN = 5;
/**
 * The longest gap between probes of an open breaker (unless the first cool-down is longer): a
 * provider's return is noticed within about this long, at the cost of one probe per gap for the
 * whole fleet while it is down.
 */
export const MAX_PROBE_GAP_MS = 2000;
/** The jitter added to each cool-down, as a share of it (at most a second). */
const JITTER_SHARE = 0.2;
/** A failure streak older than this starts over. */
const STREAK_MS = 60_000;
/** How long a probe may take before another caller may probe. */
const PROBE_MS = 30_000;

export type BreakerState = { open: false } | { open: true; retryInMs: number };

// KEYS: breaker hash, its probe. ARGV: failures to open, first cool-down, max cool-down, streak ms, probe failed (1/0), jitter ms.
// Returns {open (1/0), ms until a probe may go}.
const failureScript = redisScript(`
${LUA_CLOCK}
local now = clock_ms()
local b = KEYS[1]
local openUntil = tonumber(redis.call('HGET', b, 'open_until') or '0')
local failures = redis.call('HINCRBY', b, 'failures', 1)
if ARGV[5] == '1' or (openUntil == 0 and failures >= tonumber(ARGV[1])) then
  local cooldown = tonumber(redis.call('HGET', b, 'cooldown') or '0')
  if cooldown == 0 then cooldown = tonumber(ARGV[2]) else cooldown = math.min(cooldown * 2, tonumber(ARGV[3])) end
  openUntil = now + cooldown + tonumber(ARGV[6])
  redis.call('HSET', b, 'open_until', openUntil, 'cooldown', cooldown)
  redis.call('DEL', KEYS[2])
end
if openUntil == 0 then redis.call('PEXPIRE', b, tonumber(ARGV[4])) else redis.call('PERSIST', b) end
if openUntil > 0 then return {1, math.max(openUntil - now, 0)} end
return {0, 0}
`);

// KEYS: breaker hash, its probe. ARGV: probe ms. Returns {open, ms until a probe may go, probe taken by this
// caller (1/0), a failure streak is on record (1/0)}.
const checkScript = redisScript(`
local f = redis.call('HMGET', KEYS[1], 'open_until', 'failures')
local openUntil = tonumber(f[1] or '0')
local streak = 0
if f[2] then streak = 1 end
if openUntil == 0 then return {0, 0, 0, streak} end
${LUA_CLOCK}
local now = clock_ms()
if openUntil > now then return {1, openUntil - now, 0, 1} end
if redis.call('SET', KEYS[2], '1', 'NX', 'PX', tonumber(ARGV[1])) then return {1, 0, 1, 1} end
return {1, 1000, 0, 1}
`);

export interface Passage {
  /** The call may go. `probe`: it is the one call that tests an open breaker. */
  go: boolean;
  probe: boolean;
  retryInMs: number;
  /** The model has failures on record: its success must reset them for everyone. */
  streak: boolean;
}

export class CircuitBreakers {
  private readonly maxCooldownMs: number;

  constructor(
    private readonly redis: RedisConnection,
    private readonly redisPrefix: string,
    /** The first cool-down of an opened breaker (PROVIDER_BREAKER_COOLDOWN_MS); it doubles at each failed probe. */
    private readonly cooldownMs = MAX_PROBE_GAP_MS,
  ) {
    this.maxCooldownMs = Math.max(cooldownMs, MAX_PROBE_GAP_MS);
  }

  /** The breaker's hash and its probe's key (one hash slot). */
  private keys(model: string): [string, string] {
    const key = slotKey(this.redisPrefix, "breaker", model);
    return [key, `${key}:probe`];
  }

  /** May a call go to the model now? Closed: yes. Open: only the probe, once the cool-down has passed. */
  async pass(model: string): Promise<Passage> {
    const [open, retryInMs, probe, streak] = (await checkScript.run(this.redis, this.keys(model), [PROBE_MS])) as [number, number, number, number];
    return { go: open === 0 || probe === 1, probe: probe === 1, retryInMs, streak: streak === 1 };
  }

  /** A failure of the kind an outage makes; returns the breaker's state after it. */
  async failed(model: string, probe: boolean): Promise<BreakerState> {
    const jitterMs = Math.floor(Math.random() * Math.min(1000, this.cooldownMs * JITTER_SHARE));
    const [open, retryInMs] = (await failureScript.run(this.redis, this.keys(model), [FAILURES_TO_OPEN, this.cooldownMs, this.maxCooldownMs, STREAK_MS, probe ? 1 : 0, jitterMs])) as [number, number];
    return open === 1 ? { open: true, retryInMs } : { open: false };
  }

  /** A success closes the breaker and ends the failure streak for every replica (a call only when there is one). */
  async succeeded(model: string, passage: Pick<Passage, "streak">): Promise<void> {
    if (!passage.streak) return;
    await this.redis.del(...this.keys(model));
  }
}
