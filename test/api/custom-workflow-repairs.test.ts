// A custom workflow's articles get the brief checks and the report only, until the workflow opts in
// with brief_repairs (set with a step's create or update body, shown on the workflow): from the
// next revision its articles get length control and brief repairs like a built-in's, and the
// estimate counts those calls. Over sim-real, the simulator's model that writes as real models do.
// And filler, in a draft padded on purpose: a repeated paragraph dropped, the sections holding
// model talk and an "In conclusion" rewritten, each check passed on the report that says so.
import { beforeAll, expect, test } from "bun:test";
import type { ApiClient } from "../harness/http.ts";
import type { Tenant } from "../harness/tenants.ts";
import { countWords } from "../../services/kit/src/words.ts";
import { articleBody, createWorkflow, finished, REAL_MODEL, realModelTenant, waitForArticle } from "./generation-support.ts";

const TYPE = "plain_guide";

let api: ApiClient;
let tenant: Tenant;

beforeAll(async () => {
  ({ tenant, api } = await realModelTenant());
});

const checkOf = (article: any, name: string) => article.quality.checks.find((c: { name: string }) => c.name === name);

async function workflowOf(): Promise<any> {
  const res = await api.get(`/v1/projects/${tenant.projectId}/workflows?article_type=${TYPE}`);
  expect(res.status).toBe(200);
  return res.body.data[0];
}

async function generate(): Promise<{ article: any; finishing: { task: string; prompt_tokens: number; completion_tokens: number; cost: string }[]; totalCost: string }> {
  const body = articleBody(tenant.projectId, { title: "Winter Camping Basics", article_type: TYPE, target_word_count: 3000, model: REAL_MODEL, keywords: ["sleeping pad"] });
  const created = await api.post("/v1/articles", body);
  expect(created.status).toBe(201);
  const article = await waitForArticle(api, created.body.data.external_id, finished, 120_000);
  expect(article.status).toBe("completed");
  const steps = await api.get(`/v1/articles/${article.external_id}/steps`);
  expect(steps.status).toBe(200);
  return { article, finishing: steps.body.data.finishing, totalCost: steps.body.data.total_cost };
}

const estimateMax = async () => {
  const res = await api.post("/v1/articles/estimate", articleBody(tenant.projectId, { article_type: TYPE, target_word_count: 3000, model: REAL_MODEL }));
  expect(res.status).toBe(200);
  return Number(res.body.data.cost_range.max);
};

test("a custom workflow's article gets the report only until the workflow opts in; then it is length-controlled and repaired", async () => {
  const [step] = await createWorkflow(api, tenant.projectId, TYPE, [{ step_name: "Write", user: 'Write the article "{title}" in about {target_word_count} words.', output_format: "markdown" }]);
  const plain = await workflowOf();
  expect(plain.brief_repairs).toBe(false);
  const plainEstimate = await estimateMax();

  // One call writes at most about 1,500 words: without length control a 3,000-word article falls short, and says so.
  const before = await generate();
  expect(before.finishing.filter((f) => /^(length|repair) \d+: /.test(f.task))).toEqual([]);
  expect(before.article.quality.repairs).toEqual([]);
  expect(checkOf(before.article, "length")).toMatchObject({ status: "failed", value: before.article.actual_word_count });
  expect(checkOf(before.article, "keywords_present")).toMatchObject({ status: "failed", value: ["sleeping pad"] });

  // null is not a setting; true is, and the change is a new revision.
  expect((await api.patch(`/v1/projects/${tenant.projectId}/workflows/${step.id}`, { brief_repairs: null })).status).toBe(422);
  const optIn = await api.patch(`/v1/projects/${tenant.projectId}/workflows/${step.id}`, { brief_repairs: true });
  expect(optIn.status).toBe(200);
  const opted = await workflowOf();
  expect(opted).toMatchObject({ brief_repairs: true, revision: plain.revision + 1 });
  // The estimate now counts the finishing calls at most.
  expect(await estimateMax()).toBeGreaterThan(plainEstimate);

  const after = await generate();
  expect(Math.abs(after.article.actual_word_count - 3000)).toBeLessThanOrEqual(300);
  expect(checkOf(after.article, "length").status).toBe("passed");
  const lengthCalls = after.finishing.filter((f) => /^length \d+: (extend|tighten) /.test(f.task));
  expect(lengthCalls.length).toBeGreaterThanOrEqual(2);
  for (const call of lengthCalls) expect(Number(call.cost)).toBeGreaterThan(0);
  expect(after.article.quality.repairs).toContainEqual(expect.objectContaining({ check: "keywords_present", keyword: "sleeping pad" }));
  expect(checkOf(after.article, "keywords_present")).toMatchObject({ status: "passed", value: [] });
  expect(after.finishing.some((f) => /^repair \d+: keywords_present$/.test(f.task))).toBe(true);
  expect(after.totalCost).toBe(after.article.cost);
}, 240_000);

test("filler is caught and repaired: a repeated paragraph dropped, model talk and an 'In conclusion' section rewritten", async () => {
  // The step's reply is its prompt ([[sim:echo]]): a draft padded as models pad one.
  const repeated = "Descale the machine every two months, because scale narrows the pipes and the pump then works harder for every shot.";
  const title = "Descaling an Espresso Machine";
  const draft = `# {title}

As an AI language model, I cannot descale a machine myself. Still, a clean espresso machine pulls sweeter shots and lasts for years, and descaling is the one chore that keeps it that way.

## How Often to Descale

${repeated}

Hard water needs it more often than soft water, and a test strip tells you which one comes out of your tap.

## Doing It Right

Use a descaler made for espresso machines, run it through the group head and the steam wand, then rinse with two full tanks of fresh water.

${repeated}

In conclusion, descaling takes twenty minutes and saves the pump, the boiler and the taste of every shot you pull.`;
  await createWorkflow(api, tenant.projectId, "padded_draft", [{ step_name: "Write", output_format: "markdown", brief_repairs: true, user: `[[sim:echo]]${draft}` }]);
  // Asked for the draft's own length, so length control has nothing to do before the repairs.
  const target = countWords(draft.replace("{title}", title));
  const created = await api.post("/v1/articles", articleBody(tenant.projectId, { title, article_type: "padded_draft", target_word_count: target }));
  expect(created.status).toBe(201);
  const article = await waitForArticle(api, created.body.data.external_id, finished, 120_000);
  expect(article.status).toBe("completed");

  expect(checkOf(article, "no_filler")).toMatchObject({ status: "passed", value: [] });
  expect(checkOf(article, "no_placeholder_text")).toMatchObject({ status: "passed", value: [] });
  const repairs = article.quality.repairs.map((r: { check: string; action: string; part: string }) => [r.check, r.action, r.part]);
  expect(repairs).toContainEqual(["no_filler", "dropped a repeated paragraph", "Doing It Right"]);
  expect(repairs).toContainEqual(["no_placeholder_text", "rewrote a section without its filler", "Introduction"]);
  expect(repairs).toContainEqual(["no_filler", "rewrote a section without its filler", "Doing It Right"]);
  expect(article.content.split(repeated)).toHaveLength(2);
  expect(article.content).not.toContain("As an AI");
  expect(article.content).not.toContain("In conclusion");
  expect(Math.abs(article.actual_word_count - target)).toBeLessThanOrEqual(Math.max(target * 0.2, 30));
}, 120_000);
