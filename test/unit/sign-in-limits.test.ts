// Failed sign-ins counted in Redis (gateway/src/dashboard/sign-in-limits.ts), on a real Redis under
// a prefix of their own: past 10 failures of one email, or 50 from one client address, sign-in
// waits for the window's end, for that email or address alone; successes count nothing.
import { afterAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { connectRedis } from "../../services/kit/src/redis.ts";
import { FAILURE_WINDOW_SECONDS, FAILURES_PER_ADDRESS, FAILURES_PER_EMAIL, SignInLimits } from "../../gateway/src/dashboard/sign-in-limits.ts";

const redis = connectRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
const prefix = `test-sign-in-${randomBytes(4).toString("hex")}`;
const limits = new SignInLimits(redis, prefix);

afterAll(async () => {
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
});

test("one email's failures hold that email back, from any address, for the window", async () => {
  for (let i = 0; i < FAILURES_PER_EMAIL; i++) {
    expect(await limits.retryAfter(`10.0.0.${i}`, "Ada@Example.com")).toBe(0);
    await limits.recordFailure(`10.0.0.${i}`, "Ada@Example.com");
  }
  const wait = await limits.retryAfter("10.9.9.9", " ada@example.com");
  expect(wait).toBeGreaterThan(FAILURE_WINDOW_SECONDS - 5);
  expect(wait).toBeLessThanOrEqual(FAILURE_WINDOW_SECONDS);
  expect(await limits.retryAfter("10.9.9.9", "bo@example.com")).toBe(0);
});

test("one address's failures hold that address back, whatever the email", async () => {
  for (let i = 0; i < FAILURES_PER_ADDRESS; i++) await limits.recordFailure("192.0.2.7", `user-${i}@example.com`);
  expect(await limits.retryAfter("192.0.2.7", "someone-else@example.com")).toBeGreaterThan(0);
  expect(await limits.retryAfter("192.0.2.8", "someone-else@example.com")).toBe(0);
  // The counters name the email by a digest only.
  const keys = await redis.keys(`${prefix}:*`);
  expect(keys.some((k) => k.includes("@"))).toBe(false);
});
