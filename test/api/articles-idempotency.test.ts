// Idempotency-Key on POST /v1/articles (issue item 7, as Stripe does it): the same key and body
// replay the first response and create nothing more; another body with the key is 422; keys are
// per API-key account; concurrent identical requests make one article and one reservation.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { useStack, type TestStack } from "../harness/stack.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { addMemberWithKey, createTenant, operatorClient, type Tenant } from "../harness/tenants.ts";
import { articleBody } from "../harness/articles.ts";
import { lifecycleClient } from "../harness/service-clients.ts";
import { holdGeneration, wordUsage, type GenerationHold } from "./articles-fixtures.ts";

let stack: TestStack;
let hold: GenerationHold;

beforeAll(async () => {
  stack = await useStack();
  hold = await holdGeneration(stack);
});

afterAll(async () => {
  await hold.release();
});

const withKey = (key: string) => ({ headers: { "Idempotency-Key": key } });

async function freshTenant(monthlyWords = 1_000_000): Promise<{ tenant: Tenant; api: ApiClient }> {
  const tenant = await createTenant(stack, { monthlyWords });
  return { tenant, api: apiClient(stack.baseUrl, tenant.token) };
}

describe("Idempotency-Key", () => {
  test("the same key and body replay the first response; nothing more is created or reserved", async () => {
    const { tenant, api } = await freshTenant();
    const body = articleBody(tenant.projectId);
    const first = await api.post("/v1/articles", body, withKey("order-1"));
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();

    // The article moves on meanwhile; the replay is still the first response.
    await lifecycleClient(stack).recordProgress({ externalId: first.body.data.external_id, status: "writing", currentStep: "Research" });
    const again = await api.post("/v1/articles", { ...body }, withKey("order-1"));
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);

    expect((await api.get("/v1/articles")).body.meta.total).toBe(1);
    expect(await wordUsage(stack, tenant.accountId)).toMatchObject({ reserved: 1200 });
  });

  test("the body is compared by content, not spelling (key order, whitespace)", async () => {
    const { tenant, api } = await freshTenant();
    const body = articleBody(tenant.projectId, { keywords: ["a", "b"] });
    const first = await api.post("/v1/articles", body, withKey("spelling"));
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    const again = await api.post("/v1/articles", undefined, { rawBody: JSON.stringify(reordered, null, 4), ...withKey("spelling") });
    expect(again.status).toBe(201);
    expect(again.body.data.id).toBe(first.body.data.id);
  });

  test("the same key with a different body is 422 with a clear message, and creates nothing", async () => {
    const { tenant, api } = await freshTenant();
    const first = await api.post("/v1/articles", articleBody(tenant.projectId), withKey("order-2"));
    expect(first.status).toBe(201);
    const other = await api.post("/v1/articles", articleBody(tenant.projectId, { title: "A different article" }), withKey("order-2"));
    expect(other.status).toBe(422);
    expect(other.body.message).toMatch(/Idempotency-Key/);
    expect(other.body.message).toMatch(/different request/);
    expect(Object.keys(other.body.errors)).toEqual(["idempotency_key"]);
    expect((await api.get("/v1/articles")).body.meta.total).toBe(1);
    expect(await wordUsage(stack, tenant.accountId)).toMatchObject({ reserved: 1200 });
  });

  test("keys are scoped to the API key's account", async () => {
    const a = await freshTenant();
    const b = await freshTenant();
    const first = await a.api.post("/v1/articles", articleBody(a.tenant.projectId), withKey("shared-key"));
    const second = await b.api.post("/v1/articles", articleBody(b.tenant.projectId), withKey("shared-key"));
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.body.data.id).not.toBe(first.body.data.id);
    expect(second.headers.get("idempotent-replayed")).toBeNull();
  });

  test("two keys of the same account share the key space", async () => {
    const { tenant, api } = await freshTenant();
    const colleague = await addMemberWithKey(stack, tenant, "editor");
    const body = articleBody(tenant.projectId);
    const first = await api.post("/v1/articles", body, withKey("team-key"));
    const again = await apiClient(stack.baseUrl, colleague.token).post("/v1/articles", body, withKey("team-key"));
    expect(again.status).toBe(201);
    expect(again.body.data.id).toBe(first.body.data.id);
  });

  test("concurrent identical requests create one article and one reservation", async () => {
    const { tenant, api } = await freshTenant();
    const body = articleBody(tenant.projectId, { target_word_count: 2000 });
    const answers = await Promise.all(Array.from({ length: 8 }, () => api.post("/v1/articles", body, withKey("burst"))));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(201));
    expect(new Set(answers.map((a) => a.body.data.id)).size).toBe(1);
    expect((await api.get("/v1/articles")).body.meta.total).toBe(1);
    expect(await wordUsage(stack, tenant.accountId)).toMatchObject({ reserved: 2400, used: 0 });
  });

  test("concurrent requests with one key and different bodies: one article, the others 422", async () => {
    const { tenant, api } = await freshTenant();
    const answers = await Promise.all(Array.from({ length: 4 }, (_, i) => api.post("/v1/articles", articleBody(tenant.projectId, { title: `Variant ${i}` }), withKey("contested"))));
    const created = answers.filter((a) => a.status === 201);
    expect(new Set(created.map((a) => a.body.data.id)).size).toBe(1);
    for (const a of answers.filter((a) => a.status !== 201)) expect(a.status).toBe(422);
    expect((await api.get("/v1/articles")).body.meta.total).toBe(1);
    expect(await wordUsage(stack, tenant.accountId)).toMatchObject({ reserved: 1200 });
  });

  test("a request refused by validation does not bind the key", async () => {
    const { tenant, api } = await freshTenant();
    expect((await api.post("/v1/articles", articleBody(tenant.projectId, { tone: "sarcastic" }), withKey("fix-and-retry"))).status).toBe(422);
    expect((await api.post("/v1/articles", articleBody(tenant.projectId), withKey("fix-and-retry"))).status).toBe(201);
  });

  test("after a quota refusal the same request can succeed once words are available", async () => {
    const { tenant, api } = await freshTenant(1000);
    const body = articleBody(tenant.projectId, { target_word_count: 1000 });
    expect((await api.post("/v1/articles", body, withKey("when-upgraded"))).status).toBe(422);
    await operatorClient(stack).updatePlan({ planId: BigInt(tenant.planId), monthlyWords: 5000n });
    const res = await api.post("/v1/articles", body, withKey("when-upgraded"));
    expect(res.status).toBe(201);
    expect(await wordUsage(stack, tenant.accountId)).toMatchObject({ reserved: 1200 });
  });

  test("an unusable key is 422", async () => {
    const { tenant, api } = await freshTenant();
    const res = await api.post("/v1/articles", articleBody(tenant.projectId), withKey("k".repeat(256)));
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(["idempotency_key"]);
  });
});
