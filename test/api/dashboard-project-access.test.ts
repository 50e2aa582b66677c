// Project access per member, set from the dashboard by owners and admins: a member with view
// access to a project reads it but is refused (403) every edit there, with their key and with
// their session alike (article create and edit, workflow changes), while updating another
// project as their role allows; lifting the limit lets the edit through; only owners and admins
// set it, only on the account's own projects, and the audit log says so.
import { beforeAll, expect, test } from "bun:test";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createProject, createTenant, type Tenant } from "../harness/tenants.ts";
import { apiClient } from "../harness/http.ts";
import { articleBody } from "../harness/articles.ts";
import { DashboardClient, linkTokenFor } from "../harness/dashboard.ts";
import { stepBody } from "./workflows-fixtures.ts";

let stack: TestStack;
let tenant: Tenant;
let owner: DashboardClient;
let viewed: number;
let updated: number;
const PASSWORD = "correct horse battery";

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  viewed = tenant.projectId;
  updated = await createProject(stack, tenant.accountId, "Updated project");
  owner = new DashboardClient(stack.baseUrl);
  expect((await owner.setPassword(await linkTokenFor(stack, tenant.userId), PASSWORD)).status).toBe(200);
});

test("a member with view access to a project is refused its edits with key and session, and updates another", async () => {
  const email = `viewer-of-one-${Date.now()}@example.com`;
  const invited = await owner.post("/members", { email, role: "editor", view_only_project_ids: [viewed] });
  expect(invited.status).toBe(201);
  expect(invited.body.data).toMatchObject({ role: "editor", project_ids: [], view_only_project_ids: [viewed] });
  const member = new DashboardClient(stack.baseUrl);
  const token = /#\/set-password\/(.+)$/.exec(invited.body.data.sign_in_link)![1]!;
  expect((await member.setPassword(token, PASSWORD)).status).toBe(200);
  const key = (await member.post("/keys", { name: "member key" })).body.data.token as string;
  const api = apiClient(stack.baseUrl, key);

  const article = (await apiClient(stack.baseUrl, tenant.token).post("/v1/articles", articleBody(viewed))).body.data;
  expect((await api.get(`/v1/articles/${article.id}`)).status).toBe(200);
  expect((await api.get(`/v1/projects/${viewed}/workflows`)).status).toBe(200);
  for (const refused of [
    await api.post("/v1/articles", articleBody(viewed)),
    await api.patch(`/v1/articles/${article.id}`, { content: "# Mine now" }),
    await api.post(`/v1/projects/${viewed}/workflows`, stepBody({ article_type: "viewers-own" })),
    await member.post("/articles", articleBody(viewed)),
    await member.post(`/projects/${viewed}/workflows`, stepBody({ article_type: "viewers-own" })),
  ]) {
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe("This action is unauthorized.");
  }
  expect((await api.post(`/v1/projects/${updated}/workflows`, stepBody({ article_type: "editors-own" }))).status).toBe(201);

  // Lifting the limit lets the same edit through.
  const lifted = await owner.send("PATCH", `/members/${invited.body.data.user.id}`, { role: "editor", view_only_project_ids: [] });
  expect(lifted.status).toBe(200);
  expect(lifted.body.data.view_only_project_ids).toEqual([]);
  expect((await api.post(`/v1/projects/${viewed}/workflows`, stepBody({ article_type: "viewers-own" }))).status).toBe(201);

  // Members do not set access; owners set it on the account's own projects only.
  expect((await member.send("PATCH", `/members/${invited.body.data.user.id}`, { role: "editor", view_only_project_ids: [] })).status).toBe(403);
  const foreign = await owner.send("PATCH", `/members/${invited.body.data.user.id}`, { role: "editor", view_only_project_ids: [(await createTenant(stack)).projectId] });
  expect(foreign.status).toBe(422);
  expect(Object.keys(foreign.body.errors)).toEqual(["view_only_project_ids"]);
  expect((await owner.send("PATCH", `/members/${invited.body.data.user.id}`, { role: "editor", view_only_project_ids: ["x"] })).status).toBe(422);

  const audit = (await owner.get("/audit")).body.data.map((e: any) => e.subject);
  expect(audit).toContain(`member ${email} (editor, view only on ${viewed})`);
  const listed = (await owner.get("/members")).body.data.find((m: any) => m.user.email === email);
  expect(listed).toMatchObject({ role: "editor", view_only_project_ids: [] });
});
