// Signing in to the dashboard over real HTTP: a one-time link sets the password and starts a
// session in an HttpOnly, SameSite=Lax cookie scoped to /dashboard; sign-in rotates the session;
// every state change needs the CSRF token and the dashboard's origin; failed sign-ins are
// limited per email with one generic answer; a password change ends the other sessions; sign-out
// ends the session; sessions never open /v1 and keys never open the dashboard; a disabled user
// cannot sign in.
import { beforeAll, expect, test } from "bun:test";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, operatorClient, type Tenant } from "../harness/tenants.ts";
import { call } from "../harness/http.ts";
import { DashboardClient, linkTokenFor } from "../harness/dashboard.ts";

let stack: TestStack;
let tenant: Tenant;
const PASSWORD = "correct horse battery";

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
});

async function signedIn(t: Tenant, password = PASSWORD): Promise<DashboardClient> {
  const client = new DashboardClient(stack.baseUrl);
  const set = await client.setPassword(await linkTokenFor(stack, t.userId), password);
  expect(set.status).toBe(200);
  return client;
}

test("a one-time link sets the password once and starts a session in a protected cookie", async () => {
  const token = await linkTokenFor(stack, tenant.userId);
  const client = new DashboardClient(stack.baseUrl);
  const short = await client.post("/set-password", { token, password: "short" });
  expect(short.status).toBe(422);
  const answer = await client.post("/set-password", { token, password: PASSWORD });
  expect(answer.status).toBe(200);
  const cookie = answer.headers.get("set-cookie")!;
  expect(cookie).toMatch(/^dashboard_session=[^;]+; Path=\/dashboard; Max-Age=\d+; HttpOnly; SameSite=Lax$/);
  expect(await client.refresh()).toBe(200);
  const session = await client.get("/session");
  expect(session.body.data.user).toMatchObject({ id: tenant.userId, email: tenant.email, current_account_id: tenant.accountId });
  expect(session.body.data.user.email_verified_at).not.toBeNull();
  expect(session.body.data.current_account).toMatchObject({ id: tenant.accountId, role: "owner" });
  // The link works once.
  const again = await new DashboardClient(stack.baseUrl).post("/set-password", { token, password: PASSWORD });
  expect(again.status).toBe(401);
});

test("sign-in rotates the session, and a wrong password or unknown address get one generic answer", async () => {
  const first = await signedIn(tenant);
  const before = first.cookie;
  const wrong = await new DashboardClient(stack.baseUrl).post("/sign-in", { email: tenant.email, password: "not the password" });
  const unknown = await new DashboardClient(stack.baseUrl).post("/sign-in", { email: "nobody-here@example.com", password: PASSWORD });
  expect(wrong.status).toBe(401);
  expect(unknown.status).toBe(401);
  expect(wrong.body).toEqual(unknown.body);
  // Signing in again from the same browser ends the session it carried and starts a new one.
  const again = await first.signIn(tenant.email.toUpperCase(), PASSWORD);
  expect(again.status).toBe(200);
  expect(first.cookie).not.toBe(before);
  const old = new DashboardClient(stack.baseUrl);
  old.cookie = before;
  expect(await old.refresh()).toBe(401);
  expect(await first.refresh()).toBe(200);
});

test("state changes need the CSRF token and the dashboard's origin", async () => {
  const client = await signedIn(tenant);
  const noToken = await client.post("/keys", { name: "forged" }, { "x-csrf-token": "" });
  expect(noToken.status).toBe(403);
  const crossSite = await client.post("/keys", { name: "forged" }, { "sec-fetch-site": "cross-site" });
  expect(crossSite.status).toBe(403);
  const otherOrigin = await client.post("/keys", { name: "forged" }, { origin: "https://evil.example" });
  expect(otherOrigin.status).toBe(403);
  const signInElsewhere = await new DashboardClient(stack.baseUrl).post("/sign-in", { email: tenant.email, password: PASSWORD }, { origin: "https://evil.example" });
  expect(signInElsewhere.status).toBe(403);
  const keys = await client.get("/keys");
  expect(keys.body.data.map((k: any) => k.name)).not.toContain("forged");
  // The workflow routes served for the session check the same.
  const step = { article_type: "forged", step_number: 1, step_name: "Forged", system: "s", user: "u", output_format: "text" };
  expect((await client.post(`/projects/${tenant.projectId}/workflows`, step, { "x-csrf-token": "" })).status).toBe(403);
  expect((await client.get(`/projects/${tenant.projectId}/workflows`)).body.data).toEqual([]);
});

test("sessions never open /v1 and keys never open the dashboard", async () => {
  const client = await signedIn(tenant);
  const v1 = await call(stack.baseUrl, "GET", "/v1/articles", { headers: { cookie: client.cookie! } });
  expect(v1.status).toBe(401);
  const user = await call(stack.baseUrl, "GET", "/user", { headers: { cookie: client.cookie! } });
  expect(user.status).toBe(401);
  const byKey = await call(stack.baseUrl, "GET", "/dashboard/api/session", { token: tenant.token });
  expect(byKey.status).toBe(401);
});

test("failed sign-ins of one email are limited, with a Retry-After", async () => {
  const other = await createTenant(stack);
  await signedIn(other);
  const client = new DashboardClient(stack.baseUrl);
  for (let i = 0; i < 10; i++) expect((await client.post("/sign-in", { email: other.email, password: `wrong ${i}` })).status).toBe(401);
  const limited = await client.post("/sign-in", { email: other.email, password: PASSWORD });
  expect(limited.status).toBe(429);
  expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
  // Another address is not held back by it.
  expect((await new DashboardClient(stack.baseUrl).signIn(tenant.email, PASSWORD)).status).toBe(200);
});

test("a password change ends the user's other sessions, and sign-out ends the session", async () => {
  const t = await createTenant(stack);
  const here = await signedIn(t);
  const there = new DashboardClient(stack.baseUrl);
  expect((await there.signIn(t.email, PASSWORD)).status).toBe(200);
  const wrong = await here.post("/password", { current_password: "not it at all", new_password: "a brand new password" });
  expect(wrong.status).toBe(422);
  const changed = await here.post("/password", { current_password: PASSWORD, new_password: "a brand new password" });
  expect(changed.status).toBe(200);
  expect(changed.body.data.ended_sessions).toBe(1);
  expect(await there.refresh()).toBe(401);
  expect(await here.refresh()).toBe(200);
  expect((await new DashboardClient(stack.baseUrl).signIn(t.email, PASSWORD)).status).toBe(401);
  const out = await here.post("/sign-out");
  expect(out.status).toBe(200);
  expect(out.headers.get("set-cookie")).toMatch(/Max-Age=0/);
  const stale = new DashboardClient(stack.baseUrl);
  stale.cookie = `dashboard_session=${encodeURIComponent("x")}`;
  expect(await stale.refresh()).toBe(401);
  expect(await here.refresh()).toBe(401);
});

test("a disabled user cannot sign in, and their session ends", async () => {
  const t = await createTenant(stack);
  const client = await signedIn(t);
  await operatorClient(stack).disableUser({ userId: BigInt(t.userId) });
  expect(await client.refresh()).toBe(401);
  expect((await new DashboardClient(stack.baseUrl).signIn(t.email, PASSWORD)).status).toBe(401);
});
