// Polling GET /v1/articles/{id} is answered from the gateway's memory of the article: every change
// must still show on the very next read, by id and by external_id, and remembering an article
// must never let another tenant, or a caller who lost access, read it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import IORedis from "ioredis";
import { useStack, type TestStack } from "../harness/stack.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { addMemberWithKey, createTenant, operatorClient, type Tenant } from "../harness/tenants.ts";
import { articleBody } from "../harness/articles.ts";
import { lifecycleClient } from "../harness/service-clients.ts";
import { holdGeneration, type GenerationHold } from "./articles-fixtures.ts";
import { articleChangesChannel } from "../../services/kit/src/article-changes.ts";
import { eventually } from "../harness/eventually.ts";
import { withinPromise } from "../harness/waits.ts";

let stack: TestStack;
let hold: GenerationHold;
let tenant: Tenant;
let api: ApiClient;

beforeAll(async () => {
  stack = await useStack();
  hold = await holdGeneration(stack);
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
});

afterAll(async () => {
  await hold.release();
});

async function create() {
  const res = await api.post("/v1/articles", articleBody(tenant.projectId));
  expect(res.status).toBe(201);
  return res.body.data;
}

describe("a polled article", () => {
  test("shows each change on the next read, by id and by external_id", async () => {
    const article = await create();
    const lifecycle = lifecycleClient(stack);
    const steps = ["Research", "Outline", "Draft", "Review"];
    for (const [i, step] of steps.entries()) {
      // Read twice first, so the article is remembered when the change lands.
      for (const path of [`/v1/articles/${article.id}`, `/v1/articles/${article.external_id}`]) expect((await api.get(path)).status).toBe(200);
      await lifecycle.recordProgress({ externalId: article.external_id, status: "writing", currentStep: step, cost: `0.0${i + 1}` });
      for (const path of [`/v1/articles/${article.id}`, `/v1/articles/${article.external_id.toUpperCase()}`]) {
        expect((await api.get(path)).body.data).toMatchObject({ status: "writing", current_step: step, cost: `0.0${i + 1}` });
      }
    }
    await lifecycle.completeGeneration({ externalId: article.external_id, content: "The finished body", actualWordCount: 3, aiModelUsed: "simulator:sim-fast", cost: "0.05" });
    expect((await api.get(`/v1/articles/${article.id}`)).body.data).toMatchObject({ status: "completed", content: "The finished body", cost: "0.05" });
  });

  test("shows each change in the next list page too, in the page's order", async () => {
    const listed = [await create(), await create(), await create()];
    const page = async () => (await api.get("/v1/articles?per_page=3")).body.data as { id: number; status: string; current_step: string | null }[];
    // Remembered by polling one of them and by listing, before the change lands.
    expect((await api.get(`/v1/articles/${listed[1].id}`)).status).toBe(200);
    expect((await page()).map((a) => a.id)).toEqual(listed.map((a) => a.id).reverse());
    await lifecycleClient(stack).recordProgress({ externalId: listed[1].external_id, status: "writing", currentStep: "Draft" });
    const after = await page();
    expect(after.map((a) => a.id)).toEqual(listed.map((a) => a.id).reverse());
    expect(after[1]).toMatchObject({ id: listed[1].id, status: "writing", current_step: "Draft" });
    expect(after[0]).toMatchObject({ id: listed[2].id, status: "queued" });
  });

  test("announces each change on the deployment's channel", async () => {
    const article = await create();
    const subscriber = new IORedis(stack.env.REDIS_URL ?? "redis://127.0.0.1:6379");
    const heard: string[] = [];
    subscriber.on("message", (_channel, message) => heard.push(message));
    await subscriber.subscribe(articleChangesChannel(stack.redisPrefix));
    try {
      await lifecycleClient(stack).recordProgress({ externalId: article.external_id, status: "writing", currentStep: "Draft" });
      // Announced before article-store answers; heard here a moment later.
      await eventually(async () => heard, (messages) => messages.includes(`${article.id} ${article.external_id}`), 5_000, "the change's announcement");
    } finally {
      subscriber.disconnect();
    }
  });

  test("is never read by another account, however often its owner polls it", async () => {
    const article = await create();
    for (let i = 0; i < 5; i++) expect((await api.get(`/v1/articles/${article.id}`)).status).toBe(200);
    const stranger = await createTenant(stack);
    const res = await apiClient(stack.baseUrl, stranger.token).get(`/v1/articles/${article.id}`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ message: "Article not found." });
    expect((await apiClient(stack.baseUrl, stranger.token).get(`/v1/articles/${article.external_id}`)).status).toBe(404);
  });

  test("stops being readable within a second of its reader leaving the account", async () => {
    const article = await create();
    const viewer = await addMemberWithKey(stack, tenant, "viewer");
    const viewerApi = apiClient(stack.baseUrl, viewer.token);
    for (let i = 0; i < 5; i++) expect((await viewerApi.get(`/v1/articles/${article.id}`)).status).toBe(200);
    await operatorClient(stack).removeMember({ accountId: BigInt(tenant.accountId), userId: BigInt(viewer.userId) });
    // Read until refused, for at most the promised second; until then it may still be answered.
    const statuses: number[] = [];
    await withinPromise(1000, async () => (await viewerApi.get(`/v1/articles/${article.id}`)).status, (status) => (statuses.push(status), status === 401), "refusing the former member");
    expect(statuses.slice(0, -1).every((status) => status === 200)).toBe(true);
    // And it stays refused.
    expect((await viewerApi.get(`/v1/articles/${article.id}`)).status).toBe(401);
  });
});
