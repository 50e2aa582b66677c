// The cap on an account's open event streams (the plan's open_event_streams: SSE
// GET /v1/articles/{id}/events and gRPC WatchArticle together), held across every gateway replica
// in Redis. Each open stream holds a lease: a member of its account's sorted set, scored with the
// time it lapses. The gateway holding a stream renews its lease while the stream is open and
// removes it when the stream ends; a gateway that dies renews nothing, so its streams stop
// counting within one lease. A stream past the cap is refused before it holds a connection:
// 429 in the gate error shape, with how long until the account's oldest lease would lapse.
import { randomUUID } from "node:crypto";
import type { Logger } from "../../../services/kit/src/logger.ts";
import { isRedisAway, slotKey, type RedisConnection } from "../../../services/kit/src/redis.ts";
import { LUA_CLOCK, redisScript } from "../../../services/kit/src/redis-scripts.ts";
import { gateError, unavailableError } from "../errors.ts";

/** How long a lease counts without being renewed: a dead gateway's streams count this long at most. */
const LEASE_MS = 60_000;
const RENEW_MS = LEASE_MS / 3;

// KEYS: the account's leases; ARGV: the new lease's member, the cap, the lease's length (ms).
// Lapsed leases are dropped, then the lease is taken when fewer than the cap remain. Returns
// {1, 0} when taken, else {0, ms until the oldest remaining lease lapses}. The server's clock
// scores every lease, so replicas with skewed clocks agree.
const takeLease = redisScript(`
${LUA_CLOCK}
local now = clock_ms()
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, tonumber(oldest[2]) - now}
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {1, 0}
`);

// KEYS: one account's leases; ARGV: the lease's length (ms), then the members this gateway holds.
const renewLeases = redisScript(`
${LUA_CLOCK}
local lapses = clock_ms() + tonumber(ARGV[1])
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], lapses, ARGV[i]) end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return #ARGV - 1
`);

export interface StreamLease {
  /** Gives the lease back; once is enough, more is harmless. */
  release(): void;
}

export class OpenStreams {
  /** The leases this gateway holds, by account key. */
  private readonly held = new Map<string, Set<string>>();
  private readonly renewal: ReturnType<typeof setInterval>;

  constructor(
    private readonly redis: RedisConnection,
    private readonly prefix: string,
    private readonly logger: Logger,
  ) {
    this.renewal = setInterval(() => void this.renew(), RENEW_MS);
    this.renewal.unref?.();
  }

  /** One more open stream of the account, or a 429 when it holds `cap` already (no cap: unlimited, as before caps were known). */
  async acquire(accountId: number, cap: number | undefined): Promise<StreamLease> {
    if (!cap) return { release: () => {} };
    const key = slotKey(this.prefix, "event-streams", accountId);
    const member = randomUUID();
    let taken: number, lapsesInMs: number;
    try {
      [taken, lapsesInMs] = (await takeLease.run(this.redis, [key], [member, cap, LEASE_MS])) as [number, number];
    } catch (error) {
      if (!isRedisAway(error)) throw error;
      throw unavailableError();
    }
    if (!taken) {
      const retryAfter = Math.max(1, Math.ceil(lapsesInMs / 1000));
      throw gateError(
        429,
        "Too Many Requests",
        `This account already has ${cap} event streams open, the most its plan allows (open_event_streams); close one, or retry in ${retryAfter} seconds.`,
        // The spec's one code for a 429 (section 7), so a client that handles rate limits handles this too.
        "RATE_LIMIT_EXCEEDED",
        { retry_after: retryAfter },
        { "Retry-After": String(retryAfter) },
      );
    }
    const members = this.held.get(key) ?? new Set<string>();
    this.held.set(key, members.add(member));
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        members.delete(member);
        if (members.size === 0 && this.held.get(key) === members) this.held.delete(key);
        this.redis.zrem(key, member).catch((error: Error) => this.logger.warn("could not give back an event stream's lease; it lapses by itself", { error: error.message }));
      },
    };
  }

  private async renew(): Promise<void> {
    for (const [key, members] of this.held) {
      if (members.size === 0) continue;
      try {
        await renewLeases.run(this.redis, [key], [LEASE_MS, ...members]);
      } catch (error) {
        this.logger.warn("could not renew event streams' leases", { error: (error as Error).message });
      }
    }
  }
}
