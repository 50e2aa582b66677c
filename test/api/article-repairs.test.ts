// Brief repairs over HTTP: a blog post missing one of its keywords, with a meta description out of
// its 120–160 characters, gets one targeted call for each (lines of its cost breakdown, in its
// cost) and its report says what was repaired; an article failing more fixable checks than its
// repair budget (3 calls by default) completes with what is left failed on its report.
import { beforeAll, expect, test } from "bun:test";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { articleBody, finished, waitForArticle } from "./generation-support.ts";

let api: ApiClient;
let tenant: Tenant;

beforeAll(async () => {
  const stack: TestStack = await useStack();
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
});

const checkOf = (article: any, name: string) => article.quality.checks.find((c: { name: string }) => c.name === name);

async function repairCalls(id: string) {
  const res = await api.get(`/v1/articles/${id}/steps`);
  expect(res.status).toBe(200);
  const { finishing, total_cost } = res.body.data;
  return { calls: finishing.filter((f: { task: string }) => /^repair \d+: /.test(f.task)), total_cost };
}

test("a missing keyword and a meta description of the wrong length are repaired, and the report says so", async () => {
  const title = "Kombucha";
  const created = await api.post("/v1/articles", articleBody(tenant.projectId, { title, article_type: "blog_post", target_word_count: 600, keywords: ["nitrogen infusion"] }));
  expect(created.status).toBe(201);
  const id = created.body.data.external_id;
  const article = await waitForArticle(api, id, finished, 120_000);
  expect(article.status).toBe("completed");
  expect(article.title).toBe(title);

  const { repairs } = article.quality;
  expect(repairs.map((r: { check: string }) => r.check).sort()).toEqual(["keywords_present", "meta_description_length"]);
  expect(repairs.find((r: { check: string }) => r.check === "keywords_present")).toMatchObject({ action: "wove a keyword into a section", keyword: "nitrogen infusion" });
  expect(checkOf(article, "keywords_present")).toMatchObject({ status: "passed", value: [] });
  expect(article.content.toLowerCase()).toContain("nitrogen infusion");
  expect(checkOf(article, "meta_description_length")).toMatchObject({ status: "passed", value: [...article.description].length });
  expect([...article.description].length).toBeGreaterThanOrEqual(120);
  expect([...article.description].length).toBeLessThanOrEqual(160);

  const { calls, total_cost } = await repairCalls(id);
  expect(calls.map((c: { task: string }) => c.task.replace(/^repair \d+: /, "")).sort()).toEqual(["keywords_present", "meta_description_length"]);
  for (const call of calls) {
    expect(call.prompt_tokens).toBeGreaterThan(0);
    expect(call.completion_tokens).toBeGreaterThan(0);
    expect(Number(call.cost)).toBeGreaterThan(0);
  }
  expect(total_cost).toBe(article.cost);
}, 180_000);

test("an article whose repair budget is used up completes with the failed check on its report", async () => {
  const created = await api.post(
    "/v1/articles",
    articleBody(tenant.projectId, { title: "Sourdough Starter Care", article_type: "blog_post", target_word_count: 600, keywords: ["rye flour ratio", "hydration schedule", "banneton liner"], include_faq: true }),
  );
  expect(created.status).toBe(201);
  const id = created.body.data.external_id;
  const article = await waitForArticle(api, id, finished, 120_000);
  expect(article.status).toBe("completed");

  // Three keywords, an FAQ and a description to repair: the budget of three calls runs out first.
  expect(article.quality.repairs).toHaveLength(3);
  const failed = article.quality.checks.filter((c: { status: string }) => c.status === "failed").map((c: { name: string }) => c.name);
  expect(failed).toEqual(expect.arrayContaining(["faq_section", "meta_description_length"]));
  const { calls } = await repairCalls(id);
  expect(calls).toHaveLength(3);
}, 180_000);
