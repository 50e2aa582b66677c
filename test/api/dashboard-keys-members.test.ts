// Keys and members from the dashboard, over real HTTP: a key created with a name and a scope is
// shown once, listed by name and prefix (never its token) with its creator and last use, works
// on /user, and is refused within a second of its revocation; a roll gives a new key and ends the
// old one after the grace; members see their own keys, owners all; an invited member sets a
// password through the link, a viewer is refused an edit, and a removed member's keys stop
// working; each change is in the audit log.
import { beforeAll, expect, test } from "bun:test";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createProject, createTenant, type Tenant } from "../harness/tenants.ts";
import { apiClient, call } from "../harness/http.ts";
import { articleBody } from "../harness/articles.ts";
import { eventually } from "../harness/eventually.ts";
import { withinPromise } from "../harness/waits.ts";
import { DashboardClient, linkTokenFor } from "../harness/dashboard.ts";

let stack: TestStack;
let tenant: Tenant;
let owner: DashboardClient;
const PASSWORD = "correct horse battery";

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  owner = new DashboardClient(stack.baseUrl);
  expect((await owner.setPassword(await linkTokenFor(stack, tenant.userId), PASSWORD)).status).toBe(200);
});

const userWith = (token: string) => call(stack.baseUrl, "GET", "/user", { token });

test("a key is shown once, listed without its secret, used on /user, and refused within a second of its revocation", async () => {
  const created = await owner.post("/keys", { name: "CI deploys", expires_at: new Date(Date.now() + 86400_000).toISOString(), scope: { account_only: true, project_ids: [], read_only: true } });
  expect(created.status).toBe(201);
  const key = created.body.data;
  expect(key.token).toMatch(/^agk_/);
  expect(key).toMatchObject({ name: "CI deploys", prefix: key.token.slice(0, 12), creator: { id: tenant.userId, email: tenant.email }, revoked_at: null, last_used_at: null, scope: { account_only: true, read_only: true } });
  expect((await userWith(key.token)).status).toBe(200);
  // The scope holds: a read-only key cannot create.
  expect((await apiClient(stack.baseUrl, key.token).post("/v1/articles", articleBody(tenant.projectId))).status).toBe(403);
  const listed = await owner.get("/keys");
  expect(JSON.stringify(listed.body)).not.toContain(key.token);
  const row = listed.body.data.find((k: any) => k.id === key.id);
  expect(row).toMatchObject({ name: "CI deploys", prefix: key.prefix, expires_at: key.expires_at });
  // Its use shows as last_used_at.
  await eventually(() => owner.get("/keys"), (a) => a.body.data.find((k: any) => k.id === key.id).last_used_at !== null, 10_000, "last_used_at");
  const revokedAt = Date.now();
  expect((await owner.post(`/keys/${key.id}/revoke`)).status).toBe(200);
  await withinPromise(1000, () => userWith(key.token), (a) => a.status === 401, "the revoked key's refusal", revokedAt);
  expect((await owner.get("/keys")).body.data.find((k: any) => k.id === key.id).revoked_at).not.toBeNull();
});

test("a bad key request is a 422 naming the field", async () => {
  const noName = await owner.post("/keys", { name: "" });
  expect(noName.status).toBe(422);
  expect(Object.keys(noName.body.errors)).toContain("name");
  const past = await owner.post("/keys", { name: "old", expires_at: "2001-01-01T00:00:00Z" });
  expect(past.status).toBe(422);
  expect(Object.keys(past.body.errors)).toContain("expires_at");
  const foreign = await owner.post("/keys", { name: "elsewhere", scope: { project_ids: [(await createTenant(stack)).projectId] } });
  expect(foreign.status).toBe(422);
  const badIds = await owner.post("/keys", { name: "bad ids", scope: { project_ids: ["one", 1e30] } });
  expect(badIds.status).toBe(422);
  expect(Object.keys(badIds.body.errors)).toEqual(["scope.project_ids"]);
  const badGrace = await owner.post("/keys/1/roll", { grace_seconds: 10_000_000 });
  expect(badGrace.status).toBe(422);
  expect((await owner.post("/account", { account_id: 1e30 })).status).toBe(422);
  expect((await owner.post("/keys/999999999/revoke")).status).toBe(404);
});

test("a roll makes a new key with the old one's name and scope; the old one ends after the grace", async () => {
  const old = (await owner.post("/keys", { name: "rolled" })).body.data;
  const rolled = await owner.post(`/keys/${old.id}/roll`, { grace_seconds: 0 });
  expect(rolled.status).toBe(201);
  expect(rolled.body.data).toMatchObject({ name: "rolled", old_key: { id: old.id } });
  expect(rolled.body.data.token).not.toBe(old.token);
  expect((await userWith(rolled.body.data.token)).status).toBe(200);
  await withinPromise(1000, () => userWith(old.token), (a) => a.status === 401, "the rolled key's end");
  const graced = (await owner.post("/keys", { name: "graced" })).body.data;
  const later = await owner.post(`/keys/${graced.id}/roll`, { grace_seconds: 3600 });
  expect(new Date(later.body.data.old_key.expires_at).getTime()).toBeGreaterThan(Date.now() + 3500_000);
  expect((await userWith(graced.token)).status).toBe(200);
});

test("an invited viewer sets a password through the link, sees only their own keys, is refused an edit, and loses their keys when removed", async () => {
  const second = await createProject(stack, tenant.accountId, "Second project");
  const email = `invitee-${Date.now()}@example.com`;
  const invited = await owner.post("/members", { email, role: "viewer", project_ids: [second] });
  expect(invited.status).toBe(201);
  expect(invited.body.data).toMatchObject({ user: { email }, role: "viewer", project_ids: [second], has_password: false });
  const link: string = invited.body.data.sign_in_link;
  expect(link).toStartWith(`${stack.baseUrl}/dashboard/#/set-password/`);
  const viewer = new DashboardClient(stack.baseUrl);
  expect((await viewer.setPassword(link.split("/").pop()!, PASSWORD)).status).toBe(200);
  expect((await viewer.get("/session")).body.data.current_account).toMatchObject({ id: tenant.accountId, role: "viewer" });
  // Members are for owners and admins.
  expect((await viewer.get("/members")).status).toBe(403);
  expect((await viewer.post("/members", { email: "x@example.com", role: "owner" })).status).toBe(403);
  const own = (await viewer.post("/keys", { name: "viewer key" })).body.data;
  expect((await viewer.get("/keys")).body.data.map((k: any) => k.id)).toEqual([own.id]);
  expect((await owner.get("/keys")).body.data.map((k: any) => k.id)).toContain(own.id);
  // The viewer may read the project they were given, not change it, nor another of the account
  // (403, as for any member whose project list leaves it out).
  const asViewer = apiClient(stack.baseUrl, own.token);
  expect((await asViewer.get(`/v1/projects/${second}/workflows`)).status).toBe(200);
  expect((await asViewer.post("/v1/articles", articleBody(second))).status).toBe(403);
  expect((await asViewer.get(`/v1/projects/${tenant.projectId}/workflows`)).status).toBe(403);
  // The owner's key list and the audit log name the change; the owner promotes, then removes.
  const promoted = await owner.send("PATCH", `/members/${invited.body.data.user.id}`, { role: "editor", project_ids: [] });
  expect(promoted.body.data).toMatchObject({ role: "editor", project_ids: [] });
  await eventually(() => asViewer.post("/v1/articles", articleBody(second, { target_word_count: 300 })), (a) => a.status === 201, 5000, "the editor's creation");
  expect((await owner.send("DELETE", `/members/${invited.body.data.user.id}`)).status).toBe(200);
  await eventually(() => userWith(own.token), (a) => a.status === 401, 5000, "the removed member's key refused");
  const audit = (await owner.get("/audit")).body.data.map((e: any) => e.action);
  expect(audit).toEqual(expect.arrayContaining(["member.invited", "member.updated", "member.removed", "key.created", "key.revoked", "key.rolled"]));
  // The account's last owner stays.
  expect((await owner.send("DELETE", `/members/${tenant.userId}`)).status).toBe(422);
});

test("a user on two accounts switches the dashboard's account; an existing key's account never changes", async () => {
  const other = await createTenant(stack);
  const otherOwner = new DashboardClient(stack.baseUrl);
  expect((await otherOwner.setPassword(await linkTokenFor(stack, other.userId), PASSWORD)).status).toBe(200);
  const added = await otherOwner.post("/members", { email: tenant.email, role: "admin" });
  expect(added.status).toBe(201);
  expect(added.body.data.sign_in_link).toBeNull();
  const before = (await owner.post("/keys", { name: "first account" })).body.data;
  expect((await owner.post("/account", { account_id: other.accountId })).status).toBe(200);
  await owner.refresh();
  expect((await owner.get("/session")).body.data.current_account).toMatchObject({ id: other.accountId, role: "admin" });
  expect((await userWith(before.token)).body.current_account_id).toBe(other.accountId);
  expect((await owner.get("/keys")).body.data.map((k: any) => k.id)).not.toContain(before.id);
  expect((await owner.post("/account", { account_id: 999999999 })).status).toBe(404);
  expect((await owner.post("/account", { account_id: tenant.accountId })).status).toBe(200);
});
