// The runner process dies in the middle of a multi-step article. Started again, it picks the
// job up (BullMQ's stalled-job recovery once the dead worker's lock lapses) and resumes from the
// checkpoints: every step that had finished is never called or billed again.
import { beforeAll, expect, test } from "bun:test";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { createArticle } from "../harness/articles.ts";
import { articleBody, callsStartingWith, createWorkflow, finished, marker, runOf, waitForArticle } from "./generation-support.ts";

let stack: TestStack;
let api: ApiClient;
let tenant: Tenant;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
});

test("a killed runner resumes the article from its checkpoints", async () => {
  const m = marker("crash");
  const type = marker("crashy");
  await createWorkflow(api, tenant.projectId, type, [
    { step_name: "One", user: `[[sim:echo]]one ${m}` },
    { step_name: "Two", user: `[[sim:echo]]two ${m} after {step_1_output}` },
    { step_name: "Slow three", user: `[[sim:sleep=3000]][[sim:echo]]three ${m}` },
    { step_name: "Four", user: `[[sim:echo]]four ${m} after {step_3_output}` },
  ]);
  const created = await createArticle(api, articleBody(tenant.projectId, { article_type: type }));
  const midway = await waitForArticle(api, created.external_id, (a) => a.current_step === "Slow three", 20_000);
  expect(midway.status).toBe("writing");
  expect(midway.ai_model_used).toBe("simulator:sim-fast");
  const costBefore = Number(midway.cost);
  expect(costBefore).toBeGreaterThan(0);

  await stack.kill("generationRunner");
  await stack.start("generationRunner");

  // The dead worker's lock (RUNNER_LOCK_MS, 20 s by default) must lapse before the job is taken again.
  const done = await waitForArticle(api, created.external_id, finished, 60_000);
  expect(done.status).toBe("completed");
  expect(done.content).toBe(`four ${m} after three ${m}`);

  const count = (start: string) => callsStartingWith(stack, m, start);
  expect(await count("one")).toBe(1);
  expect(await count("two")).toBe(1);
  // Step three was in flight when the process died: it ran again; everything after it once.
  expect(await count("three")).toBe(2);
  expect(await count("four")).toBe(1);

  const run = await runOf(stack, created.external_id);
  expect(run!.steps.map((s) => s.stepNumber)).toEqual([1, 2, 3, 4]);
  expect(run!.pickups).toBe(2);
  expect(Number(done.cost)).toBeCloseTo(Number(run!.cost), 10);
}, 90_000);
