// Per-plan request caps in minute, hour and day windows, counted in Redis so every gateway
// replica shares them. Each window slides and never admits more than its limit in any span of its
// length: requests are counted in small buckets (1 s for the minute, 1 min for the hour, 15 min for
// the day), and a request is let in while the buckets that overlap the last `size` seconds hold
// fewer than the limit. Counting an overlapping bucket whole can only refuse early (by at most one
// bucket's width), never admit a request too many, so no burst at a window's edge gets past the
// limit; and a refused client is told how long until its own oldest requests leave the window,
// not the same second as every other client. One Lua script checks all windows and counts the
// request in all of them only when none is full, so a rejected request consumes nothing.
import { isCluster, isRedisAway, redisKey, slotKey, type RedisConnection } from "../../../services/kit/src/redis.ts";
import { LUA_CLOCK, redisScript } from "../../../services/kit/src/redis-scripts.ts";
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

// KEYS: the three windows' hashes; ARGV: three limits, and a time in seconds only where a test
// must place requests in time; else the server clock, so replicas with skewed clocks agree.
// A window's hash holds its buckets (field: the bucket's number, start / width), `sum` (their
// total) and `oldest` (no bucket below it): buckets that no longer overlap the window are dropped
// from the oldest up, so a request costs a few commands however busy the account is.
// Returns {allowed, refused window (1-3, 0 when allowed), then per window: requests left after
// this one, seconds until the next one is let in (refused) or until its oldest counted bucket
// leaves the window (allowed)}.
const countRequest = redisScript(`
${LUA_CLOCK}
local now = tonumber(ARGV[4]) or clock_ms() / 1000
local sizes = {60, 3600, 86400}
local widths = {1, 60, 900}
local sums, oldest, current = {}, {}, {}
for i = 1, 3 do
  local w, n = widths[i], sizes[i] / widths[i]
  local c = math.floor(now / w)
  current[i] = c
  local state = redis.call('HMGET', KEYS[i], 'sum', 'oldest')
  local sum, first = tonumber(state[1] or '0'), tonumber(state[2] or c)
  -- Buckets c-n .. c overlap the last size seconds: older ones are dropped, then oldest moves up
  -- to the first bucket holding requests (it always names one, or c). Each bucket number is passed
  -- once, and the hash expires after a window without requests, so a request mostly reads only
  -- sum and oldest.
  if first < c - n then
    while first < c - n do
      local count = tonumber(redis.call('HGET', KEYS[i], first) or '0')
      if count > 0 then
        redis.call('HDEL', KEYS[i], first)
        sum = sum - count
      end
      first = first + 1
    end
    while first < c and not redis.call('HGET', KEYS[i], first) do first = first + 1 end
    redis.call('HSET', KEYS[i], 'sum', sum, 'oldest', first)
  end
  if sum <= 0 then sum, first = 0, c end
  sums[i], oldest[i] = sum, first
end
-- Seconds until the window's oldest buckets free room for one more request.
local function waitFor(i, limit)
  local w, n, need = widths[i], sizes[i] / widths[i], sums[i] + 1 - limit
  local freed, b = 0, oldest[i]
  while b <= current[i] do
    freed = freed + tonumber(redis.call('HGET', KEYS[i], b) or '0')
    if freed >= need then return (b + n + 1) * w - now end
    b = b + 1
  end
  return sizes[i]
end
for i = 1, 3 do
  local limit = tonumber(ARGV[i])
  if sums[i] + 1 > limit then
    return {0, i, 0, 0, 0, math.max(1, math.ceil(waitFor(i, limit))), 0, 0}
  end
end
local out = {1, 0}
for i = 1, 3 do
  local w, n = widths[i], sizes[i] / widths[i]
  if redis.call('HINCRBY', KEYS[i], current[i], 1) == 1 then
    -- A new bucket: the hash lives a window past it (a new bucket comes at least every width
    -- while requests do).
    redis.call('EXPIRE', KEYS[i], sizes[i] + widths[i] + 5)
  end
  redis.call('HINCRBY', KEYS[i], 'sum', 1)
  if sums[i] == 0 then redis.call('HSET', KEYS[i], 'oldest', current[i]) end
  out[2 + i] = math.max(0, tonumber(ARGV[i]) - sums[i] - 1)
  -- The oldest bucket counted: when it leaves the window, its requests are room again.
  out[5 + i] = math.max(1, math.ceil((oldest[i] + n + 1) * w - now))
end
return out
`);

export class RateLimiter {
  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
  ) {}

  /**
   * What the account's windows of `bucket` hold now, counting nothing (the usage report). A
   * window's count includes buckets about to leave it until its next request drops them, so it
   * may read a little high, never low.
   */
  async peek(accountId: number | bigint, bucket: string, caps: WindowCaps): Promise<{ windowSeconds: number; limit: number; used: number; remaining: number }[]> {
    const limits = [caps.perMinute, caps.perHour, caps.perDay];
    const base = this.windowsBase(accountId, bucket);
    let sums: (string | null)[];
    try {
      sums = await Promise.all(WINDOWS.map((w) => this.redis.hget(`${base}:${w}`, "sum")));
    } catch (error) {
      if (!isRedisAway(error)) throw error;
      throw unavailableError();
    }
    return WINDOWS.map((windowSeconds, i) => {
      const used = Math.max(0, Number(sums[i] ?? 0));
      return { windowSeconds, limit: limits[i]!, used, remaining: Math.max(0, limits[i]! - used) };
    });
  }

  private windowsBase(accountId: number | bigint, bucket: string): string {
    return isCluster(this.redis) ? slotKey(this.prefix, "ratelimit", `${accountId}:${bucket}`) : redisKey(this.prefix, "ratelimit", String(accountId), bucket);
  }

  /** Counts a request of the account in `bucket` when every window has room; `atSeconds` only places a test's requests in time. */
  async hit(accountId: number | bigint, bucket: string, caps: WindowCaps, atSeconds?: number): Promise<RateDecision> {
    const limits = [caps.perMinute, caps.perHour, caps.perDay];
    // On a cluster the three windows of one account and bucket share a hash tag, so one script
    // reads them; one server keeps the names its counters always had.
    const base = this.windowsBase(accountId, bucket);
    const keys = WINDOWS.map((w) => `${base}:${w}`);
    let reply: number[];
    try {
      reply = (await countRequest.run(this.redis, keys, atSeconds === undefined ? limits : [...limits, atSeconds])) as number[];
    } catch (error) {
      // An answer from Redis refusing the script is a defect, reported as such; Redis away (or too
      // slow, or between masters): nothing was counted, so the request is refused as unavailable.
      if (!isRedisAway(error)) throw error;
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
