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

/** A plan of 10 requests a minute, whose hour and day windows never bind in these tests. */
const CAPS = { perMinute: 10, perHour: 10_000, perDay: 100_000 };
/** Account ids no real account has, so no real request shares these counters. */
const unusedAccount = () => 9_000_000_000 + Math.floor(Math.random() * 1e9);

describe("429 RATE_LIMIT_EXCEEDED", () => {
  test("the request over the minute cap is refused with retry_after and headers", async () => {
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

  test("no 60 seconds ever hold more than the minute's limit, whatever the bursts around its edges, and the limit's pace still gets through", async () => {
    const redis = new IORedis(stack.env.REDIS_URL ?? "redis://127.0.0.1:6379");
    try {
      const limiter = new RateLimiter(redis, stack.redisPrefix);
      const account = unusedAccount();
      // A minute's edge an hour ago, so the real clock's windows are not these.
      const edge = Math.floor(Date.now() / 60_000) * 60 - 3600;
      // A burst just before the edge, one just after, then a request every half second for 150 s.
      const times = [
        ...Array.from({ length: 10 }, (_, i) => edge - 0.5 + i * 0.01),
        ...Array.from({ length: 10 }, (_, i) => edge + 0.5 + i * 0.05),
        ...Array.from({ length: 300 }, (_, i) => edge + 1 + i * 0.5),
      ];
      const admitted: number[] = [];
      for (const t of times) if ((await limiter.hit(account, "articles", CAPS, t)).allowed) admitted.push(t);
      const crowded = admitted.map((t) => ({ at: t - edge, inLast60s: admitted.filter((x) => x > t - 60 && x <= t).length })).filter((w) => w.inLast60s > 10);
      expect(crowded).toEqual([]);
      // 150 s of steady asking gets the plan's pace: 10 at once, then 10 as each minute frees them.
      expect(admitted.length).toBeGreaterThanOrEqual(25);
    } finally {
      redis.disconnect();
    }
  });

  test("a refused client is told its own wait: a second before it, still refused; at it, let in", async () => {
    const redis = new IORedis(stack.env.REDIS_URL ?? "redis://127.0.0.1:6379");
    try {
      const limiter = new RateLimiter(redis, stack.redisPrefix);
      const edge = Math.floor(Date.now() / 60_000) * 60 - 7200;
      const hit = (account: number, t: number) => limiter.hit(account, "articles", CAPS, t);
      // One account used its 10 just before the edge; another 5 half a minute before and 5 just after.
      const [early, spread] = [unusedAccount(), unusedAccount()];
      for (let i = 0; i < 10; i++) await hit(early, edge - 0.5 + i * 0.01);
      for (let i = 0; i < 5; i++) await hit(spread, edge - 30 + i);
      for (let i = 0; i < 5; i++) await hit(spread, edge + 0.1 + i * 0.05);
      const waits = [];
      for (const account of [early, spread]) {
        const refused = await hit(account, edge + 0.5);
        expect(refused.allowed).toBe(false);
        waits.push(refused.resetSeconds);
        // A refused request counts nowhere, so asking a second early changes nothing.
        expect((await hit(account, edge + 0.5 + refused.resetSeconds - 1)).allowed).toBe(false);
        expect((await hit(account, edge + 0.5 + refused.resetSeconds)).allowed).toBe(true);
      }
      // Each is told when its own oldest requests leave the minute.
      expect(waits).toEqual([60, 31]);
    } finally {
      redis.disconnect();
    }
  });

  test("the article endpoints share one limit", async () => {
    const tenant = await createTenant(stack, { perMinute: 2 });
    const api = apiClient(stack.baseUrl, tenant.token);
    expect((await api.get("/v1/articles")).status).toBe(200);
    expect((await api.get("/v1/articles/123456789")).status).toBe(404);
    expect((await api.post("/v1/articles", {})).status).toBe(429);
  });

  test("a refused request does not count in the other windows", async () => {
    const tenant = await createTenant(stack, { perMinute: 2, perHour: 50, perDay: 500 });
    const api = apiClient(stack.baseUrl, tenant.token);
    for (let i = 0; i < 5; i++) await api.get("/v1/articles");
    const redis = new IORedis(stack.env.REDIS_URL ?? "redis://127.0.0.1:6379");
    const hour = Number(await redis.hget(`${stack.redisPrefix}:ratelimit:${tenant.accountId}:articles:3600`, "sum"));
    const day = Number(await redis.hget(`${stack.redisPrefix}:ratelimit:${tenant.accountId}:articles:86400`, "sum"));
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
