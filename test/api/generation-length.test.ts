// Length control over HTTP: a 3,000-word blog post written by sim-real, the simulator's model that
// writes as real models do (at most about 1,500 words a call, 55-70% of a long request, one call in
// five cut mid-sentence), lands within ±10% of its target; the calls that extended or tightened its
// sections are lines of its cost breakdown with their tokens and cost, and the words settled are
// the final content's. A humanized one's pass output, a rewrite the model under-writes too, gets
// length control of its own ("after humanize: …" lines) before its words are settled.
import { beforeAll, expect, test } from "bun:test";
import type { ApiClient } from "../harness/http.ts";
import type { Tenant } from "../harness/tenants.ts";
import type { TestStack } from "../harness/stack.ts";
import { eventually } from "../harness/eventually.ts";
import { countWords } from "../../services/kit/src/words.ts";
import { articleBody, finished, REAL_MODEL, realModelTenant, waitForArticle, wordUsage } from "./generation-support.ts";

let api: ApiClient;
let tenant: Tenant;
let stack: TestStack;

beforeAll(async () => {
  ({ stack, tenant, api } = await realModelTenant());
});

test("a 3,000-word blog post over an under-writing model lands within ±10%, its section calls in /steps", async () => {
  const created = await api.post("/v1/articles", articleBody(tenant.projectId, { title: "Home Espresso on a Budget", article_type: "blog_post", target_word_count: 3000, model: REAL_MODEL }));
  expect(created.status).toBe(201);
  const id = created.body.data.external_id;
  const article = await waitForArticle(api, id, finished, 120_000);
  expect(article.status).toBe("completed");
  expect(Math.abs(article.actual_word_count - 3000)).toBeLessThanOrEqual(300);
  // The words reported are the content's, counted as the quota counts them.
  expect(article.actual_word_count).toBe(countWords(article.content));
  expect(/[.!?]["')*]*$/.test(article.content.trimEnd())).toBe(true);

  const res = await api.get(`/v1/articles/${id}/steps`);
  expect(res.status).toBe(200);
  const { steps, finishing, total_cost } = res.body.data;
  expect(steps.map((s: { step_name: string }) => s.step_name)).toEqual(["Research notes", "Outline", "Draft", "Meta description", "Final polish"]);
  const lengthCalls = finishing.filter((f: { task: string }) => /^length \d+: (extend|tighten) /.test(f.task));
  // One call writes at most about 1,500 words: the rest came section by section.
  expect(lengthCalls.length).toBeGreaterThanOrEqual(3);
  for (const call of lengthCalls) {
    expect(call.model).toBe(REAL_MODEL);
    expect(call.prompt_tokens).toBeGreaterThan(0);
    expect(call.completion_tokens).toBeGreaterThan(0);
    expect(Number(call.cost)).toBeGreaterThan(0);
  }
  expect(total_cost).toBe(article.cost);
});

test("the humanize pass's rewrite of a 3,000-word article is brought back within ±10%, and what is settled is its words", async () => {
  // A tenant of its own, so its allowance holds this article's words alone.
  const { tenant, api } = await realModelTenant();
  const created = await api.post(
    "/v1/articles",
    articleBody(tenant.projectId, { title: "Winter Camping for Beginners", article_type: "tutorial", target_word_count: 3000, model: REAL_MODEL, target_keyword: "winter camping", humanize: true }),
  );
  expect(created.status).toBe(201);
  const id = created.body.data.external_id;
  const article = await waitForArticle(api, id, (a) => finished(a) && a.content !== a.original_content, 120_000);
  expect(article.status).toBe("completed");
  // The pass's call writes at most about 1,500 words; its output got length control of its own.
  expect(Math.abs(article.actual_word_count - 3000)).toBeLessThanOrEqual(300);
  expect(article.actual_word_count).toBe(countWords(article.content));
  expect(article.quality.checks.find((c: { name: string }) => c.name === "length")).toMatchObject({ status: "passed", value: article.actual_word_count });
  const { finishing, total_cost } = (await api.get(`/v1/articles/${id}/steps`)).body.data;
  const tasks = finishing.map((f: { task: string }) => f.task);
  expect(tasks).toContain("humanize");
  expect(tasks.filter((t: string) => /^after humanize: length \d+: extend /.test(t)).length).toBeGreaterThanOrEqual(1);
  expect(total_cost).toBe(article.cost);
  // The words settled against the allowance (just after completion) are the final content's, not the calls' along the way.
  const usage = await eventually(() => wordUsage(stack, tenant.accountId), (u) => u.reservedWords === 0n, 10_000, "the article's words settled");
  expect(usage.usedWords).toBe(BigInt(article.actual_word_count));
});

test("short targets land within ±20% or ±30 words, whichever is larger, though the model overshoots them", async () => {
  const ids = await Promise.all(
    [120, 200, 280].map(async (target) => {
      const created = await api.post("/v1/articles", articleBody(tenant.projectId, { title: "Descaling an Espresso Machine", article_type: "listicle", target_word_count: target, model: REAL_MODEL }));
      expect(created.status).toBe(201);
      return { target, id: created.body.data.external_id };
    }),
  );
  for (const { target, id } of ids) {
    const article = await waitForArticle(api, id, finished, 120_000);
    expect(article.status).toBe("completed");
    expect(Math.abs(article.actual_word_count - target)).toBeLessThanOrEqual(Math.max(target * 0.2, 30));
    expect(article.quality.checks.find((c: { name: string }) => c.name === "length").status).toBe("passed");
  }
});
