// Who may read and change workflows (spec 4.4–4.10, 5, 7): view for reads, update for writes,
// another account's project and another project's step are 404, too little access is 403.
import { beforeAll, describe, expect, test } from "bun:test";
import { useStack, type TestStack } from "../harness/stack.ts";
import { apiClient } from "../harness/http.ts";
import { addMemberWithKey, createProject } from "../harness/tenants.ts";
import { stepBody, workflowTenant, type WorkflowTenant } from "./workflows-fixtures.ts";

let stack: TestStack;
let owner: WorkflowTenant;
let stepId: number;
beforeAll(async () => {
  stack = await useStack();
  owner = await workflowTenant(stack);
  stepId = (await owner.api.post(owner.base, stepBody({ article_type: "guarded" }))).body.data.id;
});

/** Every workflow endpoint of a project, as [method, path, body]. */
function endpoints(projectId: number | string, step: number | string): Array<[string, string, unknown]> {
  const base = `/v1/projects/${projectId}/workflows`;
  return [
    ["GET", base, undefined],
    ["POST", base, stepBody({ article_type: "intruder" })],
    ["GET", `${base}/${step}`, undefined],
    ["PATCH", `${base}/${step}`, { step_name: "Hijacked" }],
    ["PUT", `${base}/${step}`, { step_name: "Hijacked" }],
    ["DELETE", `${base}/${step}`, undefined],
    ["POST", `${base}/reorder`, { steps: [{ id: step, step_number: 9 }] }],
    ["POST", `${base}/duplicate`, { source_article_type: "guarded", new_article_type: "copied" }],
  ];
}

async function send(token: string, method: string, path: string, body: unknown) {
  const api = apiClient(stack.baseUrl, token);
  if (method === "GET") return api.get(path);
  if (method === "DELETE") return api.delete(path);
  return api[method.toLowerCase() as "post" | "patch" | "put"](path, body);
}

async function ownerSeesStepUnchanged() {
  const res = await owner.api.get(`${owner.base}/${stepId}`);
  expect(res.status).toBe(200);
  expect(res.body.data.step_name).toBe("Draft");
  expect(res.body.data.step_number).toBe(1);
  const list = await owner.api.get(owner.base);
  expect(list.body.data.map((w: any) => w.slug)).toEqual(["guarded"]);
}

describe("workflow access", () => {
  test("401 without a usable key, 402 without a subscription, on every endpoint", async () => {
    const unsubscribed = await workflowTenant(stack, { subscribed: false });
    for (const [method, path, body] of endpoints(owner.projectId, stepId)) {
      const anonymous = await send("", method, path, body);
      expect(anonymous.status).toBe(401);
      expect(anonymous.body.code).toBe("UNAUTHENTICATED");
      const unpaid = await send(unsubscribed.token, method, path, body);
      expect(unpaid.status).toBe(402);
      expect(unpaid.body.code).toBe("NO_ACTIVE_SUBSCRIPTION");
    }
  });

  test("another account's project is 404 on every endpoint and nothing changes", async () => {
    const stranger = await workflowTenant(stack);
    for (const [method, path, body] of endpoints(owner.projectId, stepId)) {
      const res = await send(stranger.token, method, path, body);
      expect(res.status).toBe(404);
      expect(Object.keys(res.body)).toEqual(["message"]);
    }
    await ownerSeesStepUnchanged();
  });

  test("a step of another project of the same account is 404 through this project", async () => {
    const otherProject = await createProject(stack, owner.accountId, "Second project");
    const base = `/v1/projects/${otherProject}/workflows`;
    for (const [method, path, body] of [
      ["GET", `${base}/${stepId}`, undefined],
      ["PATCH", `${base}/${stepId}`, { step_name: "Hijacked" }],
      ["PUT", `${base}/${stepId}`, { step_name: "Hijacked" }],
      ["DELETE", `${base}/${stepId}`, undefined],
    ] as const) {
      const res = await send(owner.token, method, path, body);
      expect(res.status).toBe(404);
      expect(Object.keys(res.body)).toEqual(["message"]);
    }
    // The other project does not see the type either.
    expect((await owner.api.get(base)).body.data).toEqual([]);
    await ownerSeesStepUnchanged();
  });

  test("a viewer reads but every write is 403 with a message only", async () => {
    const viewer = await addMemberWithKey(stack, owner, "viewer");
    const api = apiClient(stack.baseUrl, viewer.token);
    expect((await api.get(owner.base)).status).toBe(200);
    expect((await api.get(`${owner.base}/${stepId}`)).status).toBe(200);
    for (const [method, path, body] of endpoints(owner.projectId, stepId).filter(([m]) => m !== "GET")) {
      const res = await send(viewer.token, method, path, body);
      expect(res.status).toBe(403);
      expect(Object.keys(res.body)).toEqual(["message"]);
    }
    // Authorization comes before validation: an invalid body from a viewer is still 403.
    expect((await api.post(owner.base, { article_type: "blog_post" })).status).toBe(403);
    await ownerSeesStepUnchanged();
  });

  test("an editor may write", async () => {
    const editor = await addMemberWithKey(stack, owner, "editor");
    const res = await apiClient(stack.baseUrl, editor.token).post(owner.base, stepBody({ article_type: "editor_type" }));
    expect(res.status).toBe(201);
    expect((await owner.api.delete(`${owner.base}/${res.body.data.id}`)).status).toBe(200);
  });

  test("a member limited to other projects gets 403 here", async () => {
    const elsewhere = await createProject(stack, owner.accountId, "Limited project");
    const limited = await addMemberWithKey(stack, owner, "editor", [elsewhere]);
    const res = await apiClient(stack.baseUrl, limited.token).get(owner.base);
    expect(res.status).toBe(403);
    expect(Object.keys(res.body)).toEqual(["message"]);
    expect((await apiClient(stack.baseUrl, limited.token).get(`/v1/projects/${elsewhere}/workflows`)).status).toBe(200);
  });

  test("non-numeric or unknown ids in the path are 404 JSON", async () => {
    const badProjects = ["abc", "1.5", "-3", "0", "99999999999999999999999", 999999999];
    const badSteps = ["abc", "-1", "1e3", "99999999999999999999999", 999999999];
    const attempts = [
      ...badProjects.flatMap((project) => endpoints(project, stepId)),
      ...badSteps.flatMap((step) => endpoints(owner.projectId, step).filter(([, path]) => path.endsWith(`/${step}`))),
    ];
    for (const [method, path, body] of attempts) {
      const res = await send(owner.token, method, path, body);
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toContain("application/json");
      expect(Object.keys(res.body)).toEqual(["message"]);
    }
    await ownerSeesStepUnchanged();
  });
});
