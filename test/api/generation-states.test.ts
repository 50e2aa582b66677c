// What a polling client sees while an article generates (spec 3): queued, then writing with each
// step's name in current_step and updated_at advancing, polishing for the finishing touches, then
// completed; ai_model_used appears once the first step is done and cost only ever grows.
import { beforeAll, expect, test } from "bun:test";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { createArticle } from "../harness/articles.ts";
import { eventually } from "../harness/eventually.ts";
import { articleBody, createWorkflow, finished, isDecimal, marker, runOf, waitForArticle } from "./generation-support.ts";

let stack: TestStack;
let api: ApiClient;
let tenant: Tenant;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
});

interface Seen {
  status: string;
  current_step: string | null;
  ai_model_used: string | null;
  cost: string;
  updated_at: string;
}

/** Polls the article until it is finished, keeping every distinct state it showed. */
async function watch(id: string, timeoutMs: number): Promise<Seen[]> {
  const seen: Seen[] = [];
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const a = (await api.get(`/v1/articles/${id}`)).body.data;
    const s: Seen = { status: a.status, current_step: a.current_step, ai_model_used: a.ai_model_used, cost: a.cost, updated_at: a.updated_at };
    const last = seen.at(-1);
    if (!last || JSON.stringify(last) !== JSON.stringify(s)) seen.push(s);
    if (finished(a)) return seen;
    await Bun.sleep(40);
  }
  throw new Error(`article ${id} did not finish; seen ${JSON.stringify(seen)}`);
}

test("queued, writing step by step, polishing, completed; the model and cost appear as steps finish", async () => {
  const m = marker("states");
  const type = marker("states");
  // The title's directive reaches only prompts that carry the title: here the humanization pass,
  // so polishing lasts long enough to be seen.
  await createWorkflow(api, tenant.projectId, type, [
    { step_name: "Outline", user: `[[sim:sleep=700]][[sim:echo]]outline ${m}` },
    { step_name: "Draft", user: `[[sim:sleep=700]][[sim:echo]]draft ${m} from {step_1_output}` },
  ]);
  const created = await createArticle(api, articleBody(tenant.projectId, { article_type: type, title: "Slow polish [[sim:sleep=700]]", humanize: true }));
  expect(created).toMatchObject({ status: "queued", current_step: null, ai_model_used: null, cost: "0.00" });

  const seen = await watch(created.external_id, 30_000);
  const phases = seen.map((s) => `${s.status}:${s.current_step ?? ""}`).filter((p, i, all) => p !== all[i - 1]);
  const writing = phases.filter((p) => p.startsWith("writing:"));
  expect(writing).toEqual(["writing:Outline", "writing:Draft"]);
  expect(phases).toContain("polishing:Humanizing");
  expect(phases.indexOf("polishing:Humanizing")).toBeGreaterThan(phases.indexOf("writing:Draft"));
  expect(seen.at(-1)).toMatchObject({ status: "completed", current_step: null, ai_model_used: "simulator:sim-fast" });

  // Unknown until the first step has finished, then the model that produced it.
  expect(seen.find((s) => s.current_step === "Outline")!.ai_model_used).toBeNull();
  expect(seen.find((s) => s.current_step === "Draft")!.ai_model_used).toBe("simulator:sim-fast");

  // updated_at advances with each step; cost is a decimal string that never goes down.
  const at = (step: string) => Date.parse(seen.find((s) => s.current_step === step)!.updated_at);
  expect(at("Draft")).toBeGreaterThan(at("Outline"));
  expect(at("Humanizing")).toBeGreaterThan(at("Draft"));
  for (const [i, s] of seen.entries()) {
    expect(isDecimal(s.cost)).toBe(true);
    if (i > 0) expect(Number(s.cost)).toBeGreaterThanOrEqual(Number(seen[i - 1]!.cost));
    if (i > 0) expect(Date.parse(s.updated_at)).toBeGreaterThanOrEqual(Date.parse(seen[i - 1]!.updated_at));
  }

  // The humanized version is current; the generation output stays as original_content.
  const done = await waitForArticle(api, created.external_id, finished, 5_000);
  expect(done.original_content).toBe(`draft ${m} from outline ${m}`);
  expect(done.content).not.toBe(done.original_content);
  // The run records which version the pass added just after adding it: a moment after completion.
  const run = await eventually(() => runOf(stack, created.external_id), (r) => r?.humanizedVersionId !== undefined, 5_000, "the run to record its humanized version");
  expect(done.current_version_id).toBe(Number(run!.humanizedVersionId));
  // Both steps and the humanization pass, each billed once.
  expect(done.cost).toBe(run!.cost);
  expect(Number(done.cost)).toBeGreaterThan(run!.steps.reduce((sum, s) => sum + Number(s.cost), 0));
}, 45_000);
