// Project access levels (spec 5.6, 5.7): owner, admin and editor may update, viewer may only view;
// a membership limited to some projects reaches only those; another account's project is 404.
import { beforeAll, describe, expect, test } from "bun:test";
import { useStack, type TestStack } from "../harness/stack.ts";
import { apiClient } from "../harness/http.ts";
import { addMemberWithKey, createProject, createTenant, type Tenant } from "../harness/tenants.ts";

let stack: TestStack;
let tenant: Tenant;
beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
});

const step = (articleType: string) => ({
  article_type: articleType,
  step_number: 1,
  step_name: "Draft",
  system: "You write articles.",
  user: "Write about {title}.",
  output_format: "markdown",
});

describe("roles", () => {
  for (const role of ["owner", "admin", "editor"] as const) {
    test(`${role} may view and update`, async () => {
      const member = await addMemberWithKey(stack, tenant, role);
      const api = apiClient(stack.baseUrl, member.token);
      expect((await api.get(`/v1/projects/${tenant.projectId}/workflows`)).status).toBe(200);
      expect((await api.post(`/v1/projects/${tenant.projectId}/workflows`, step(`by_${role}`))).status).toBe(201);
    });
  }

  test("viewer may view but not update (403 with a message)", async () => {
    const viewer = await addMemberWithKey(stack, tenant, "viewer");
    const api = apiClient(stack.baseUrl, viewer.token);
    expect((await api.get(`/v1/projects/${tenant.projectId}/workflows`)).status).toBe(200);
    const refused = await api.post(`/v1/projects/${tenant.projectId}/workflows`, step("by_viewer"));
    expect(refused.status).toBe(403);
    expect(Object.keys(refused.body)).toEqual(["message"]);
  });
});

describe("project-limited memberships", () => {
  test("reach only their projects; the others are 403", async () => {
    const other = await createProject(stack, tenant.accountId, "Out of reach");
    const member = await addMemberWithKey(stack, tenant, "editor", [tenant.projectId]);
    const api = apiClient(stack.baseUrl, member.token);
    expect((await api.get(`/v1/projects/${tenant.projectId}/workflows`)).status).toBe(200);
    const refused = await api.get(`/v1/projects/${other}/workflows`);
    expect(refused.status).toBe(403);
    expect(typeof refused.body.message).toBe("string");
  });
});

describe("another account", () => {
  test("its projects are never confirmed to exist (404)", async () => {
    const stranger = await createTenant(stack);
    const api = apiClient(stack.baseUrl, stranger.token);
    const res = await api.get(`/v1/projects/${tenant.projectId}/workflows`);
    expect(res.status).toBe(404);
    expect(Object.keys(res.body)).toEqual(["message"]);
    expect((await api.get(`/v1/projects/999999999/workflows`)).status).toBe(404);
  });
});
