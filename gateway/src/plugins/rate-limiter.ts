// Per-plan request caps in minute, hour and day windows, counted in Redis so every gateway
// replica shares them. Each window slides: a request is let in while the previous fixed window's
// count, weighted by how much of it still overlaps the last `size` seconds, plus the current
// window's count stays under the limit (the sliding window counter). So no burst doubles the
// limit around a window's edge, as fixed windows allowed, and a refused client is told how long
// until its own count lets the next request in, not the same second as every other client. One
// Lua script checks all windows and counts the request in all of them only when none is full, so
// a rejected request consumes nothing.
import type IORedis from "ioredis";
import { redisKey } from "../../../services/kit/src/redis.ts";
import { redisScript } from "../../../services/kit/src/redis-scripts.ts";
import { unavailableError } from "../errors.ts";

export interface WindowCaps {
  perMinute: number;
  perHour: number;
  perDay: number;
}

export interface RateDecision {
  allowed: boolean;
  /** The window that is closest to full (or the one that refused). */
  limit: number;
  remaining: number;
  resetSeconds: number;
  /** Every window as "limit;w=seconds", for the RateLimit-Policy header. */
  policy: string;
}

const WINDOWS = [60, 3600, 86400] as const;

// KEYS: the three counters' base names; ARGV: three limits, and a time in seconds only where a
// test must place requests at a window's edge; else the server clock, so replicas with skewed
// clocks agree. Returns {allowed, refused window (1-3, 0 when allowed),
// then per window: requests left after this one, seconds until the next one is let in (refused)
// or until the current fixed window ends (allowed)}.
const countRequest = redisScript(`
local now = tonumber(ARGV[4])
if not now then
  local t = redis.call('TIME')
  now = tonumber(t[1]) + tonumber(t[2]) / 1000000
end
local sizes = {60, 3600, 86400}
local keys, weighted, current, previous, elapsed = {}, {}, {}, {}, {}
for i = 1, 3 do
  local size = sizes[i]
  local start = now - (now % size)
  keys[i] = KEYS[i] .. ':' .. math.floor(start)
  current[i] = tonumber(redis.call('GET', keys[i]) or '0')
  previous[i] = tonumber(redis.call('GET', KEYS[i] .. ':' .. math.floor(start - size)) or '0')
  elapsed[i] = now - start
  weighted[i] = previous[i] * (1 - elapsed[i] / size) + current[i]
end
for i = 1, 3 do
  local limit = tonumber(ARGV[i])
  if weighted[i] + 1 > limit then
    -- Seconds until the weighted count leaves room for one: within this window as the previous
    -- one's weight fades, else after the rollover as this one's does.
    local size, wait = sizes[i], nil
    if current[i] + 1 <= limit and previous[i] > 0 then
      wait = size * (1 - (limit - 1 - current[i]) / previous[i]) - elapsed[i]
    end
    if wait == nil or wait > size - elapsed[i] then
      local after = 0
      if current[i] > 0 and current[i] + 1 > limit then after = size * (1 - (limit - 1) / current[i]) end
      wait = size - elapsed[i] + after
    end
    return {0, i, 0, 0, 0, math.max(1, math.ceil(wait)), 0, 0}
  end
end
local out = {1, 0}
for i = 1, 3 do
  local count = redis.call('INCR', keys[i])
  if count == 1 then redis.call('EXPIRE', keys[i], 2 * sizes[i] + 5) end
  out[2 + i] = math.max(0, math.floor(tonumber(ARGV[i]) - weighted[i] - 1))
end
for i = 1, 3 do out[5 + i] = math.max(1, math.ceil(sizes[i] - elapsed[i])) end
return out
`);

export class RateLimiter {
  constructor(
    private readonly redis: IORedis,
    private readonly prefix: string,
  ) {}

  /** Counts a request of the account in `bucket` when every window has room; `atSeconds` only places a test's requests in time. */
  async hit(accountId: number | bigint, bucket: string, caps: WindowCaps, atSeconds?: number): Promise<RateDecision> {
    const limits = [caps.perMinute, caps.perHour, caps.perDay];
    const keys = WINDOWS.map((w) => redisKey(this.prefix, "ratelimit", String(accountId), bucket, String(w)));
    let reply: number[];
    try {
      reply = (await countRequest.run(this.redis, keys, atSeconds === undefined ? limits : [...limits, atSeconds])) as number[];
    } catch (error) {
      // An answer from Redis refusing the script is a defect, reported as such.
      if ((error as Error).name === "ReplyError") throw error;
      // Redis is away (or too slow): nothing was counted, so the request is refused as unavailable.
      throw unavailableError();
    }
    const [allowed, refusedIndex, ...rest] = reply;
    const remaining = rest.slice(0, 3);
    const resets = rest.slice(3, 6);
    const policy = limits.map((l, i) => `${l};w=${WINDOWS[i]}`).join(", ");
    if (!allowed) {
      const i = refusedIndex - 1;
      return { allowed: false, limit: limits[i], remaining: 0, resetSeconds: Math.max(1, resets[0]), policy };
    }
    // Report the tightest window: the one with the fewest requests left.
    let tightest = 0;
    for (let i = 1; i < 3; i++) if (remaining[i] < remaining[tightest]) tightest = i;
    return { allowed: true, limit: limits[tightest], remaining: remaining[tightest], resetSeconds: Math.max(1, resets[tightest]), policy };
  }
}

export function rateLimitHeaders(d: RateDecision): Record<string, string> {
  return {
    "RateLimit-Limit": String(d.limit),
    "RateLimit-Remaining": String(d.remaining),
    "RateLimit-Reset": String(d.resetSeconds),
    "RateLimit-Policy": d.policy,
  };
}
