// Lua scripts sent by their digest (EVALSHA), and once in full when Redis does not know it yet
// (a fresh or restarted server). Plain commands, so they join a connection's auto-pipeline like
// any other: ioredis's own defineCommand breaks there when the command is defined after the turn's
// pipeline was made (redis/ioredis#1931: "pipeline[functionName] is not a function", then replies
// matched to the wrong callers).
import type { RedisConnection } from "./redis.ts";
import { createHash } from "node:crypto";

/**
 * Lua: `clock_ms()`, the Redis server's clock in ms. Scripts that keep time read this one clock,
 * so replicas whose own clocks disagree still agree on when a lease lapses or a window ends.
 */
export const LUA_CLOCK = `local function clock_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end`;

export interface RedisScript {
  /** Runs the script with these keys and arguments on `redis`. */
  run(redis: RedisConnection, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown>;
}

export function redisScript(lua: string): RedisScript {
  const sha = createHash("sha1").update(lua).digest("hex");
  return {
    async run(redis, keys, args) {
      try {
        return await redis.evalsha(sha, keys.length, ...keys, ...args);
      } catch (error) {
        if (!(error as Error).message?.startsWith("NOSCRIPT")) throw error;
        // EVAL also caches it under the same digest: the next run goes by digest again.
        return redis.eval(lua, keys.length, ...keys, ...args);
      }
    },
  };
}
