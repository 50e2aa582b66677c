// The monthly word quota at creation (spec 4.1 rule 1, 7): 120% of target_word_count is
// reserved; a shortfall is 422 on target_word_count naming remaining and required words; two
// concurrent creations never both pass when only one fits; a failure after the reservation gives it back.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { useStack, type TestStack } from "../harness/stack.ts";
import { apiClient } from "../harness/http.ts";
import { createTenant } from "../harness/tenants.ts";
import { articleBody } from "../harness/articles.ts";
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

describe("word quota at creation", () => {
  test("a shortfall is 422 on target_word_count with the remaining and required words", async () => {
    const tenant = await createTenant(stack, { monthlyWords: 2000 });
    const api = apiClient(stack.baseUrl, tenant.token);
    expect((await api.post("/v1/articles", articleBody(tenant.projectId, { target_word_count: 1000 }))).status).toBe(201);

    const res = await api.post("/v1/articles", articleBody(tenant.projectId, { target_word_count: 1000 }));
    expect(res.status).toBe(422);
    expect(Object.keys(res.body.errors)).toEqual(["target_word_count"]);
    const message = res.body.errors.target_word_count[0];
    expect(message).toContain("800"); // remaining: 2000 - 1200
    expect(message).toContain("1200"); // required: 120% of 1000
    expect(typeof res.body.message).toBe("string");

    expect(await wordUsage(stack, tenant.accountId)).toMatchObject({ reserved: 1200, remaining: 800 });
    expect((await api.get("/v1/articles")).body.meta.total).toBe(1);
  });

  test("concurrent creations when only one fits: exactly one 201", async () => {
    const tenant = await createTenant(stack, { monthlyWords: 1500 });
    const api = apiClient(stack.baseUrl, tenant.token);
    const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => api.post("/v1/articles", articleBody(tenant.projectId, { title: `Race ${i}`, target_word_count: 1000 }))));
    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([201, 422, 422, 422, 422]);
    for (const refused of answers.filter((a) => a.status === 422)) expect(Object.keys(refused.body.errors)).toEqual(["target_word_count"]);
    expect(await wordUsage(stack, tenant.accountId)).toMatchObject({ reserved: 1200, remaining: 300 });
    expect((await api.get("/v1/articles")).body.meta.total).toBe(1);
  });

  test("a creation that fails after the reservation releases it", async () => {
    const tenant = await createTenant(stack, { monthlyWords: 10_000 });
    const api = apiClient(stack.baseUrl, tenant.token);
    // With article-store down, the words are reserved and the article cannot be stored.
    await stack.kill("articleStore");
    try {
      const res = await api.post("/v1/articles", articleBody(tenant.projectId, { target_word_count: 2000 }));
      expect(res.status).toBeGreaterThanOrEqual(500);
      expect(Object.keys(res.body)).toEqual(["message"]);
      expect(await wordUsage(stack, tenant.accountId)).toMatchObject({ reserved: 0, used: 0, remaining: 10_000 });
    } finally {
      await stack.start("articleStore");
    }
    expect((await api.post("/v1/articles", articleBody(tenant.projectId, { target_word_count: 2000 }))).status).toBe(201);
    expect(await wordUsage(stack, tenant.accountId)).toMatchObject({ reserved: 2400 });
  });
});
