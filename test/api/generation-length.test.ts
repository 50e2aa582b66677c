// Length control over HTTP: a 3,000-word blog post written by sim-real, the simulator's model that
// writes as real models do (at most about 1,500 words a call, 55-70% of a long request, one call in
// five cut mid-sentence), lands within ±10% of its target; the calls that extended or tightened its
// sections are lines of its cost breakdown with their tokens and cost, and the words settled are
// the final content's.
import { beforeAll, expect, test } from "bun:test";
import type { ApiClient } from "../harness/http.ts";
import type { Tenant } from "../harness/tenants.ts";
import { countWords } from "../../services/kit/src/words.ts";
import { articleBody, finished, REAL_MODEL, realModelTenant, waitForArticle } from "./generation-support.ts";

let api: ApiClient;
let tenant: Tenant;

beforeAll(async () => {
  ({ tenant, api } = await realModelTenant());
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
