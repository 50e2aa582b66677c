// Scripts run by digest (services/kit/src/redis-scripts.ts) against a real Redis: on a connection
// that pipelines each turn's commands, a script's first run may share its turn with other commands
// (ioredis's defineCommand failed there and misrouted replies), and a script Redis does not know
// is sent in full once.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import IORedis from "ioredis";
import { redisScript } from "../../services/kit/src/redis-scripts.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const prefix = `test-redis-scripts-${randomBytes(4).toString("hex")}`;
let pipelining: IORedis;

beforeAll(() => {
  pipelining = new IORedis(REDIS_URL, { enableAutoPipelining: true });
});

afterAll(async () => {
  const keys = await pipelining.keys(`${prefix}:*`);
  if (keys.length > 0) await pipelining.del(...keys);
  pipelining.disconnect();
});

test("a script's first runs share a pipelined turn with other commands, and each caller gets its own reply", async () => {
  // A script of its own text (a unique comment), so no earlier run has cached it on the server.
  const increment = redisScript(`-- ${prefix}\nreturn redis.call('INCRBY', KEYS[1], ARGV[1])`);
  const key = `${prefix}:counter`;
  const [published, ...replies] = await Promise.all([
    pipelining.publish(`${prefix}:channel`, "in the same turn"),
    ...Array.from({ length: 20 }, (_, i) => increment.run(pipelining, [`${key}:${i}`], [i + 1])),
    pipelining.set(`${prefix}:plain`, "after"),
  ]);
  expect(published).toBe(0);
  expect(replies.slice(0, 20)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
  expect(replies[20]).toBe("OK");
});

test("a script Redis does not know is sent in full once, and is known by its digest after", async () => {
  const lua = `-- ${prefix} echo\nreturn ARGV[1]`;
  const digest = createHash("sha1").update(lua).digest("hex");
  expect(await pipelining.script("EXISTS", digest)).toEqual([0]);
  const echo = redisScript(lua);
  expect(await echo.run(pipelining, [`${prefix}:k`], ["one"])).toBe("one");
  expect(await pipelining.script("EXISTS", digest)).toEqual([1]);
  expect(await echo.run(pipelining, [`${prefix}:k`], ["two"])).toBe("two");
});

test("an error the script raises is the caller's, not retried as a missing script", async () => {
  const failing = redisScript(`-- ${prefix} fails\nreturn redis.error_reply('refused by the script')`);
  await expect(failing.run(pipelining, [`${prefix}:k`], [])).rejects.toThrow("refused by the script");
});
