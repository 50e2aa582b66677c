// An article runs on the workflow revision pinned at its creation: changing the workflow while
// it generates affects the next article only (spec 2.3 rule 4).
import { beforeAll, expect, test } from "bun:test";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { useStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { createArticle } from "../harness/articles.ts";
import { articleBody, createWorkflow, finished, marker, waitForArticle } from "./generation-support.ts";

let api: ApiClient;
let tenant: Tenant;

beforeAll(async () => {
  const stack = await useStack();
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
});

test("a workflow changed mid-generation does not change the running article", async () => {
  const type = marker("pinned");
  const steps = await createWorkflow(api, tenant.projectId, type, [
    { step_name: "Slow start", user: "[[sim:sleep=2500]][[sim:echo]]old-1" },
    { step_name: "Finish", user: "[[sim:echo]]old-2 {step_1_output}" },
  ]);
  const running = await createArticle(api, articleBody(tenant.projectId, { article_type: type }));
  await waitForArticle(api, running.external_id, (a) => a.status === "writing" && a.current_step === "Slow start", 15_000);

  const changed = await api.patch(`/v1/projects/${tenant.projectId}/workflows/${steps[1].id}`, { user: "[[sim:echo]]new-2 {step_1_output}", step_name: "New finish" });
  expect(changed.status).toBe(200);

  const done = await waitForArticle(api, running.external_id, finished, 30_000);
  expect(done.status).toBe("completed");
  expect(done.content).toBe("old-2 old-1");

  const next = await createArticle(api, articleBody(tenant.projectId, { article_type: type }));
  const nextDone = await waitForArticle(api, next.external_id, finished, 30_000);
  expect(nextDone.content).toBe("new-2 old-1");
}, 60_000);

test("the very next creation after a workflow change runs on the changed workflow (the gateway's memory of revisions follows it)", async () => {
  const type = marker("followed");
  const [step] = await createWorkflow(api, tenant.projectId, type, [{ step_name: "Only", user: "[[sim:echo]]first" }]);
  const first = await createArticle(api, articleBody(tenant.projectId, { article_type: type }));

  expect((await api.patch(`/v1/projects/${tenant.projectId}/workflows/${step.id}`, { user: "[[sim:echo]]second" })).status).toBe(200);
  const second = await createArticle(api, articleBody(tenant.projectId, { article_type: type }));

  expect((await api.delete(`/v1/projects/${tenant.projectId}/workflows/${step.id}`)).status).toBe(200);
  const refused = await api.post("/v1/articles", articleBody(tenant.projectId, { article_type: type }));
  expect(refused.status).toBe(422);
  expect(Object.keys(refused.body.errors)).toContain("article_type");

  await createWorkflow(api, tenant.projectId, type, [{ step_name: "Again", user: "[[sim:echo]]third" }]);
  const third = await createArticle(api, articleBody(tenant.projectId, { article_type: type }));

  const contents = await Promise.all([first, second, third].map(async (a) => (await waitForArticle(api, a.external_id, finished, 30_000)).content));
  expect(contents).toEqual(["first", "second", "third"]);
}, 60_000);
