// Upstream failures: a step whose calls keep failing while the provider answers others (its probe
// succeeds) fails the article only after the job's retries, each of which tries the call three
// times (status failed, reason recorded, reserved words released, no webhook); a one-off failure
// is tried again within the call, without re-running finished steps; an unavailable model runs
// its fallback instead.
import { beforeAll, describe, expect, test } from "bun:test";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { createArticle } from "../harness/articles.ts";
import { articleBody, callsStartingWith, createWorkflow, finished, marker, runOf, waitForArticle, webhookReceiver, wordUsage } from "./generation-support.ts";

let stack: TestStack;
let api: ApiClient;
let tenant: Tenant;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
});

describe("failures", () => {
  test("a step that always fails fails the article after its retries: reason kept, words released, no webhook", async () => {
    const own = await createTenant(stack);
    const ownApi = apiClient(stack.baseUrl, own.token);
    const hook = webhookReceiver();
    try {
      const m = marker("fail");
      const type = marker("failing");
      await createWorkflow(ownApi, own.projectId, type, [{ user: `[[sim:echo]]before ${m}` }, { user: `[[sim:fail]] always ${m}` }]);
      const created = await createArticle(ownApi, articleBody(own.projectId, { article_type: type, webhook_url: hook.url }));
      expect(Number((await wordUsage(stack, own.accountId)).reservedWords)).toBe(Math.ceil(150 * 1.2));

      // Five attempts with exponential backoff from 2 s (QUEUES.generation) take about 30 s.
      const failed = await waitForArticle(ownApi, created.external_id, (a) => a.status === "failed", 60_000);
      expect(failed.content).toBeNull();
      // The reason as the client reads it on the article (the runner's own record is not the API).
      expect(failed.failure_reason).toBeString();
      expect(failed.failure_reason).toContain("answered 500");

      // Every attempt retried only the failing step, three tries each at least; the step before it ran once.
      expect(await callsStartingWith(stack, m, "before")).toBe(1);
      // Five attempts, and a pickup more each time the run resumed after parking on the model's open breaker.
      expect((await runOf(stack, created.external_id))!.pickups).toBeGreaterThanOrEqual(5);
      expect(await callsStartingWith(stack, m, " always")).toBeGreaterThanOrEqual(15);

      const usage = await wordUsage(stack, own.accountId);
      expect(Number(usage.reservedWords)).toBe(0);
      expect(Number(usage.usedWords)).toBe(0);

      // Terminal: it stays failed and no webhook goes out, over 1.5 s after it failed (longer than
      // the stack's webhook backoff, so a webhook sent anyway would have arrived).
      await Bun.sleep(1500);
      expect((await ownApi.get(`/v1/articles/${created.external_id}`)).body.data.status).toBe("failed");
      expect(hook.received).toEqual([]);
    } finally {
      hook.stop();
    }
  }, 90_000);

  test("a one-off failure is retried and the article completes, finished steps untouched", async () => {
    const m = marker("once");
    const type = marker("flaky");
    await createWorkflow(api, tenant.projectId, type, [{ user: `[[sim:echo]]one ${m}` }, { user: `[[sim:fail-once]][[sim:echo]]two ${m}` }]);
    const created = await createArticle(api, articleBody(tenant.projectId, { article_type: type }));
    const done = await waitForArticle(api, created.external_id, finished, 30_000);
    expect(done.status).toBe("completed");
    expect(done.content).toBe(`two ${m}`);
    expect(await callsStartingWith(stack, m, "one")).toBe(1);
    // The failed call and its retry within the same pickup: the fallback is not involved (sim-fast has none).
    expect(await callsStartingWith(stack, m, "two")).toBe(2);
    expect((await runOf(stack, created.external_id))!.pickups).toBe(1);
  });
});

describe("fallback", () => {
  test("an unavailable model runs its configured fallback, which is recorded as the model used", async () => {
    const m = marker("fallback");
    const type = marker("fallback");
    await createWorkflow(api, tenant.projectId, type, [{ user: `[[sim:echo]]first ${m}` }, { user: `[[sim:echo]]second ${m}` }]);
    const created = await createArticle(api, articleBody(tenant.projectId, { article_type: type, model: "simulator:unavailable-model" }));
    const done = await waitForArticle(api, created.external_id, finished, 30_000);
    expect(done.status).toBe("completed");
    expect(done.ai_model_used).toBe("simulator:sim-fast");
    const run = await runOf(stack, created.external_id);
    expect(run!.requestedModel).toBe("simulator:unavailable-model");
    expect(run!.steps.map((s) => [s.model, s.usedFallback])).toEqual([
      ["simulator:sim-fast", true],
      ["simulator:sim-fast", true],
    ]);
    // Billed at the fallback's prices: only the calls that produced output cost anything.
    expect(Number(done.cost)).toBeCloseTo(Number(run!.cost), 10);
  });

  test("a model outside the catalog is refused at creation", async () => {
    const res = await api.post("/v1/articles", articleBody(tenant.projectId, { model: "simulator:no-such-model" }));
    expect(res.status).toBe(422);
    expect(res.body.errors.model).toBeDefined();
  });
});
