// Rate limits per plan (spec 7, 8): minute, hour and day windows counted in Redis and shared by
// every gateway replica; the article endpoints share one limit; a refused request consumes nothing.
import { beforeAll, describe, expect, test } from "bun:test";
import IORedis from "ioredis";
import { useStack, type TestStack } from "../harness/stack.ts";
import { apiClient } from "../harness/http.ts";
import { createTenant } from "../harness/tenants.ts";
import { buildApp } from "../../gateway/src/app.ts";
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
    expect(refused.body.retry_after).toBeLessThanOrEqual(60);
    expect(refused.headers.get("retry-after")).toBe(String(refused.body.retry_after));
    expect(refused.headers.get("ratelimit-remaining")).toBe("0");
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
    expect(refused.body.retry_after).toBeLessThanOrEqual(3600);
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
      }, serviceToken: stack.env.SERVICE_TOKEN }),
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
