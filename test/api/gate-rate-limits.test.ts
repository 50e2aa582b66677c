// Rate limits per plan (spec 7, 8): minute, hour and day windows counted in Redis and shared by
// every gateway replica; the article endpoints share one limit; a refused request consumes nothing.
import { stackCredential } from "../harness/service-clients.ts";
import { beforeAll, describe, expect, test } from "bun:test";
import IORedis from "ioredis";
import { useStack, type TestStack } from "../harness/stack.ts";
import { apiClient } from "../harness/http.ts";
import { createTenant } from "../harness/tenants.ts";
import { buildApp } from "../../gateway/src/app.ts";
import { RateLimiter } from "../../gateway/src/plugins/rate-limiter.ts";
import { connectServices } from "../../gateway/src/services.ts";
import { createLogger } from "../../services/kit/src/logger.ts";

let stack: TestStack;
beforeAll(async () => {
  stack = await useStack();
});

/** Minute windows restart on the minute: a test that fills one starts well away from the edge. */
async function awayFromMinuteEdge() {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 55_000) await Bun.sleep(60_000 - intoMinute + 100);
}

describe("429 RATE_LIMIT_EXCEEDED", () => {
  test("the request over the minute cap is refused with retry_after and headers", async () => {
    await awayFromMinuteEdge();
    const tenant = await createTenant(stack, { perMinute: 3 });
    const api = apiClient(stack.baseUrl, tenant.token);
    for (let i = 0; i < 3; i++) {
      const ok = await api.get("/v1/articles");
      expect(ok.status).toBe(200);
      expect(ok.headers.get("ratelimit-limit")).toBe("3");
      expect(ok.headers.get("ratelimit-remaining")).toBe(String(2 - i));
      expect(Number(ok.headers.get("ratelimit-reset"))).toBeGreaterThan(0);
    }
    const refused = await api.get("/v1/articles");
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe("RATE_LIMIT_EXCEEDED");
    expect(typeof refused.body.error).toBe("string");
    expect(typeof refused.body.message).toBe("string");
    expect(Number.isInteger(refused.body.retry_after)).toBe(true);
    expect(refused.body.retry_after).toBeGreaterThan(0);
    // The window slides: three requests of this minute weigh on the next one until a third of it
    // has passed (60 s + 60 / 3 at the most).
    expect(refused.body.retry_after).toBeLessThanOrEqual(80);
    expect(refused.headers.get("retry-after")).toBe(String(refused.body.retry_after));
    expect(refused.headers.get("ratelimit-remaining")).toBe("0");
  });

  test("no burst around a window's edge: a plan of 10 a minute lets 10 in around it, not 20, and tells each refused client its own wait", async () => {
    const redis = new IORedis(stack.env.REDIS_URL ?? "redis://127.0.0.1:6379");
    try {
      const limiter = new RateLimiter(redis, stack.redisPrefix);
      // Account ids no real account has, so no real request shares these counters.
      const unusedAccount = () => 9_000_000_000 + Math.floor(Math.random() * 1e9);
      const account = unusedAccount();
      const caps = { perMinute: 10, perHour: 10_000, perDay: 100_000 };
      // A minute's edge an hour ago, so the real clock's windows are not these.
      const edge = Math.floor(Date.now() / 60_000) * 60 - 3600;
      const before = [];
      for (let i = 0; i < 10; i++) before.push(await limiter.hit(account, "articles", caps, edge - 0.5 + i * 0.01));
      expect(before.every((d) => d.allowed)).toBe(true);
      const after = [];
      for (let i = 0; i < 10; i++) after.push(await limiter.hit(account, "articles", caps, edge + 0.5 + i * 0.05));
      expect(after.filter((d) => d.allowed)).toHaveLength(0);
      // Over the next minute the plan's 10 come back gradually, not all at once.
      const later = [];
      for (let s = 1; s <= 60; s++) later.push((await limiter.hit(account, "articles", caps, edge + s)).allowed);
      expect(later.filter(Boolean).length).toBeLessThanOrEqual(10);
      expect(later.slice(0, 5).filter(Boolean).length).toBeLessThanOrEqual(1);
      // A client is told when its own count lets it in again, not the window's end: one that used
      // its 10 last minute may go again when a tenth of that minute has faded (about 6 s in);
      // one that used 5 then and 5 now waits until a fifth has (12 s in).
      expect(after[0]!.resetSeconds).toBe(6);
      const other = unusedAccount();
      for (let i = 0; i < 5; i++) await limiter.hit(other, "articles", caps, edge - 30 + i);
      for (let i = 0; i < 5; i++) await limiter.hit(other, "articles", caps, edge + 0.1 + i * 0.05);
      const refused = await limiter.hit(other, "articles", caps, edge + 0.5);
      expect(refused.allowed).toBe(false);
      expect(refused.resetSeconds).toBe(12);
    } finally {
      redis.disconnect();
    }
  });

  test("the article endpoints share one limit", async () => {
    await awayFromMinuteEdge();
    const tenant = await createTenant(stack, { perMinute: 2 });
    const api = apiClient(stack.baseUrl, tenant.token);
    expect((await api.get("/v1/articles")).status).toBe(200);
    expect((await api.get("/v1/articles/123456789")).status).toBe(404);
    expect((await api.post("/v1/articles", {})).status).toBe(429);
  });

  test("a refused request does not count in the other windows", async () => {
    await awayFromMinuteEdge();
    const tenant = await createTenant(stack, { perMinute: 2, perHour: 50, perDay: 500 });
    const api = apiClient(stack.baseUrl, tenant.token);
    for (let i = 0; i < 5; i++) await api.get("/v1/articles");
    const redis = new IORedis(stack.env.REDIS_URL ?? "redis://127.0.0.1:6379");
    const hourKeys = await redis.keys(`${stack.redisPrefix}:ratelimit:${tenant.accountId}:articles:3600:*`);
    const dayKeys = await redis.keys(`${stack.redisPrefix}:ratelimit:${tenant.accountId}:articles:86400:*`);
    const hour = Number(await redis.get(hourKeys[0]));
    const day = Number(await redis.get(dayKeys[0]));
    redis.disconnect();
    expect(hour).toBe(2);
    expect(day).toBe(2);
  });

  test("the hour window refuses once full even while the minute window has room", async () => {
    const tenant = await createTenant(stack, { perMinute: 100, perHour: 2 });
    const api = apiClient(stack.baseUrl, tenant.token);
    await api.get("/v1/articles");
    await api.get("/v1/articles");
    const refused = await api.get("/v1/articles");
    expect(refused.status).toBe(429);
    expect(refused.body.retry_after).toBeGreaterThan(0);
    expect(refused.body.retry_after).toBeLessThanOrEqual(3600 + 3600 / 2);
  });

  test("limits are shared by every gateway replica", async () => {
    await awayFromMinuteEdge();
    const tenant = await createTenant(stack, { perMinute: 4 });
    // A second gateway on the same Redis prefix and services, answering in-process.
    const redis = new IORedis(stack.env.REDIS_URL ?? "redis://127.0.0.1:6379");
    const subscriber = redis.duplicate();
    const replica = buildApp({
      clients: connectServices({ services: {
        accountsBilling: stack.env.ACCOUNTS_BILLING_URL,
        workflowCatalog: stack.env.WORKFLOW_CATALOG_URL,
        articleStore: stack.env.ARTICLE_STORE_URL,
        generationRunner: stack.env.GENERATION_RUNNER_URL,
        webhookDispatcher: stack.env.WEBHOOK_DISPATCHER_URL,
      } }, stackCredential(stack, "gateway")),
      redis,
      subscriber,
      redisPrefix: stack.redisPrefix,
      logger: createLogger("gateway-replica"),
    });
    const viaReplica = () => replica.handle(new Request("http://replica/v1/articles", { headers: { authorization: `Bearer ${tenant.token}` } }));
    const api = apiClient(stack.baseUrl, tenant.token);
    const statuses = [(await api.get("/v1/articles")).status, (await viaReplica()).status, (await api.get("/v1/articles")).status, (await viaReplica()).status];
    expect(statuses).toEqual([200, 200, 200, 200]);
    expect((await viaReplica()).status).toBe(429);
    expect((await api.get("/v1/articles")).status).toBe(429);
    redis.disconnect();
    subscriber.disconnect();
  });
});
