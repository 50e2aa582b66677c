// One circuit breaker per model, in Redis so every runner replica sees the same state. A model
// that failed FAILURES_TO_OPEN times in a row (server errors, timeouts, broken connections; a
// success anywhere resets the count) opens: its calls go to the catalog's fallback model, or wait.
// Once the cool-down has passed, one caller (whoever takes the probe) tries the model again:
// success closes the breaker for everyone, failure opens it again for twice as long (up to
// MAX_COOLDOWN_FACTOR times the first). A call never fails for the breaker itself; how long one may wait is the
// runner's outage bound (PROVIDER_OUTAGE_LIMIT_MS).
import type IORedis from "ioredis";
import { redisKey } from "../../../kit/src/redis.ts";
import { redisScript } from "../../../kit/src/redis-scripts.ts";

export const FAILURES_TO_OPEN = 5;
/** The longest cool-down, as a multiple of the first. */
const MAX_COOLDOWN_FACTOR = 12;
/** A failure streak older than this starts over. */
const STREAK_MS = 60_000;
/** How long a probe may take before another caller may probe. */
const PROBE_MS = 30_000;

export type BreakerState = { open: false } | { open: true; retryInMs: number };

// KEYS: breaker hash. ARGV: failures to open, first cool-down, max cool-down, streak ms, probe failed (1/0).
// Returns {open (1/0), ms until a probe may go}.
const failureScript = redisScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local b = KEYS[1]
local openUntil = tonumber(redis.call('HGET', b, 'open_until') or '0')
local failures = redis.call('HINCRBY', b, 'failures', 1)
if ARGV[5] == '1' or (openUntil == 0 and failures >= tonumber(ARGV[1])) then
  local cooldown = tonumber(redis.call('HGET', b, 'cooldown') or '0')
  if cooldown == 0 then cooldown = tonumber(ARGV[2]) else cooldown = math.min(cooldown * 2, tonumber(ARGV[3])) end
  openUntil = now + cooldown
  redis.call('HSET', b, 'open_until', openUntil, 'cooldown', cooldown)
  redis.call('DEL', b .. ':probe')
end
if openUntil == 0 then redis.call('PEXPIRE', b, tonumber(ARGV[4])) else redis.call('PERSIST', b) end
if openUntil > 0 then return {1, math.max(openUntil - now, 0)} end
return {0, 0}
`);

// KEYS: breaker hash. Returns {open, ms until a probe may go, probe taken by this caller (1/0)}.
const checkScript = redisScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local openUntil = tonumber(redis.call('HGET', KEYS[1], 'open_until') or '0')
if openUntil == 0 then return {0, 0, 0} end
if openUntil > now then return {1, openUntil - now, 0} end
if redis.call('SET', KEYS[1] .. ':probe', '1', 'NX', 'PX', tonumber(ARGV[1])) then return {1, 0, 1} end
return {1, 1000, 0}
`);

export interface Passage {
  /** The call may go. `probe`: it is the one call that tests an open breaker. */
  go: boolean;
  probe: boolean;
  retryInMs: number;
}

export class CircuitBreakers {
  /** Open breakers as this runner last saw them; a closed one costs no Redis call. */
  private readonly open = new Map<string, number>();
  /** Breakers this runner has seen fail since their last success, whose success must reset them in Redis. */
  private readonly failing = new Set<string>();

  constructor(
    private readonly redis: IORedis,
    private readonly redisPrefix: string,
    /** The first cool-down of an opened breaker (PROVIDER_BREAKER_COOLDOWN_MS); it doubles at each failed probe. */
    private readonly cooldownMs = 5000,
  ) {}

  private key(model: string): string {
    return redisKey(this.redisPrefix, "breaker", model);
  }

  /** Whether this runner knows the model's breaker to be open (as of its last look). */
  seemsOpen(model: string): boolean {
    return this.open.has(model);
  }

  /** May a call go to the model now? Closed: yes. Open: only the probe, once the cool-down has passed. */
  async pass(model: string): Promise<Passage> {
    if (!this.open.has(model) && !this.failing.has(model)) return { go: true, probe: false, retryInMs: 0 };
    const [open, retryInMs, probe] = (await checkScript.run(this.redis, [this.key(model)], [PROBE_MS])) as [number, number, number];
    if (open === 0) {
      this.open.delete(model);
      return { go: true, probe: false, retryInMs: 0 };
    }
    this.open.set(model, Date.now() + retryInMs);
    return { go: probe === 1, probe: probe === 1, retryInMs };
  }

  /** A failure of the kind an outage makes; returns the breaker's state after it. */
  async failed(model: string, probe: boolean): Promise<BreakerState> {
    this.failing.add(model);
    const [open, retryInMs] = (await failureScript.run(this.redis, [this.key(model)], [FAILURES_TO_OPEN, this.cooldownMs, this.cooldownMs * MAX_COOLDOWN_FACTOR, STREAK_MS, probe ? 1 : 0])) as [number, number];
    if (open === 1) {
      this.open.set(model, Date.now() + retryInMs);
      return { open: true, retryInMs };
    }
    return { open: false };
  }

  /** A success closes the breaker (and ends the failure streak) for every replica. */
  async succeeded(model: string): Promise<void> {
    if (!this.failing.has(model) && !this.open.has(model)) return;
    this.failing.delete(model);
    this.open.delete(model);
    await this.redis.del(this.key(model), `${this.key(model)}:probe`);
  }
}
