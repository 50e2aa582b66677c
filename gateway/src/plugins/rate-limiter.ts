// Per-plan request caps in minute, hour and day windows, counted in Redis so every gateway
// replica shares them. One Lua script checks all windows and counts the request in all of them
// only when none is full, so a rejected request consumes nothing.
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

// KEYS: the three counters' base names; ARGV: three limits. Uses the server clock so replicas
// with skewed clocks agree on window boundaries.
const countRequest = redisScript(`
local now = tonumber(redis.call('TIME')[1])
local sizes = {60, 3600, 86400}
local counts, resets, keys = {}, {}, {}
for i = 1, 3 do
  local size = sizes[i]
  local start = now - (now % size)
  keys[i] = KEYS[i] .. ':' .. start
  counts[i] = tonumber(redis.call('GET', keys[i]) or '0')
  resets[i] = start + size - now
end
for i = 1, 3 do
  if counts[i] >= tonumber(ARGV[i]) then
    return {0, i, counts[1], counts[2], counts[3], resets[1], resets[2], resets[3]}
  end
end
for i = 1, 3 do
  counts[i] = redis.call('INCR', keys[i])
  if counts[i] == 1 then redis.call('EXPIRE', keys[i], sizes[i] + 5) end
end
return {1, 0, counts[1], counts[2], counts[3], resets[1], resets[2], resets[3]}
`);

export class RateLimiter {
  constructor(
    private readonly redis: IORedis,
    private readonly prefix: string,
  ) {}

  async hit(accountId: number | bigint, bucket: string, caps: WindowCaps): Promise<RateDecision> {
    const limits = [caps.perMinute, caps.perHour, caps.perDay];
    const keys = WINDOWS.map((w) => redisKey(this.prefix, "ratelimit", String(accountId), bucket, String(w)));
    let reply: number[];
    try {
      reply = (await countRequest.run(this.redis, keys, limits)) as number[];
    } catch (error) {
      // An answer from Redis refusing the script is a defect, reported as such.
      if ((error as Error).name === "ReplyError") throw error;
      // Redis is away (or too slow): nothing was counted, so the request is refused as unavailable.
      throw unavailableError();
    }
    const [allowed, refusedIndex, ...rest] = reply;
    const counts = rest.slice(0, 3);
    const resets = rest.slice(3, 6);
    const policy = limits.map((l, i) => `${l};w=${WINDOWS[i]}`).join(", ");
    if (!allowed) {
      const i = refusedIndex - 1;
      return { allowed: false, limit: limits[i], remaining: 0, resetSeconds: Math.max(1, resets[i]), policy };
    }
    // Report the tightest window: the one with the fewest requests left.
    let tightest = 0;
    for (let i = 1; i < 3; i++) if (limits[i] - counts[i] < limits[tightest] - counts[tightest]) tightest = i;
    return { allowed: true, limit: limits[tightest], remaining: Math.max(0, limits[tightest] - counts[tightest]), resetSeconds: Math.max(1, resets[tightest]), policy };
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
