// The dashboard in Chromium: the operator's one-time link signs the owner in (no token readable
// by the page's scripts, nothing from another origin, no script refused by the CSP); a key is
// created and shown once, works on /user and is refused within a second of its revocation; a
// member invited with view access to one project signs in from the mailed invitation and is
// refused an article there; signing out ends the session.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { call } from "../harness/http.ts";
import { withinPromise } from "../harness/waits.ts";
import { linkAddress, linkTokenFor } from "../harness/dashboard.ts";
import { linkTokenIn } from "../harness/mailbox.ts";
import { launchBrowser, openTab, setPasswordFrom, step, TEST_PASSWORD, type DashboardTab } from "./browser-kit.ts";

const PASSWORD = TEST_PASSWORD;
let stack: TestStack;
let tenant: Tenant;
let browser: Browser;
let owner: DashboardTab;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  browser = await launchBrowser();
  owner = await openTab(browser, stack.baseUrl);
});

afterAll(async () => {
  await browser?.close();
});

test("the operator's one-time link signs the owner in, and no script can read the session", async () => {
  const { page } = owner;
  await step(page, "owner-sign-in", async () => {
    const token = await linkTokenFor(stack, tenant.userId);
    const response = await page.goto(`${stack.baseUrl}/dashboard/`);
    expect(response!.headers()["content-security-policy"]).toContain("script-src 'self'");
    expect(response!.headers()["content-security-policy"]).not.toContain("unsafe-inline");
    await setPasswordFrom(owner, linkAddress(stack, token));
    // The link's token left the address bar and history at once.
    expect(page.url()).not.toContain(token);
    expect(await page.evaluate(() => ({ cookie: document.cookie, local: localStorage.length, session: sessionStorage.length }))).toEqual({ cookie: "", local: 0, session: 0 });
    const [cookie] = await owner.context.cookies();
    expect(cookie).toMatchObject({ name: "dashboard_session", httpOnly: true, sameSite: "Lax", path: "/dashboard" });
    await expect(page.getByText(tenant.email)).toBeTruthy();
  });
  expect(owner.elsewhere).toEqual([]);
  expect(owner.pageErrors).toEqual([]);
}, 60_000);

test("a key is shown once, works on /user, and is refused within a second of its revocation", async () => {
  const { page } = owner;
  await step(page, "keys", async () => {
    await page.getByRole("link", { name: "API keys" }).click();
    await page.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
    await page.getByLabel("Name").fill("Browser key");
    await page.getByRole("button", { name: "Create key" }).click();
    const token = (await page.getByTestId("new-token").textContent())!;
    expect(token).toMatch(/^agk_/);
    const user = await call(stack.baseUrl, "GET", "/user", { token });
    expect(user.status).toBe(200);
    expect(user.body.email).toBe(tenant.email);
    // Shown once: the list, read again, has its prefix and never the token.
    await page.reload();
    await page.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
    const listed = await page.locator("main").innerText();
    expect(listed).toContain("Browser key");
    expect(listed).toContain(`${token.slice(0, 12)}…`);
    expect(listed).not.toContain(token);
    const revokedAt = Date.now();
    await page.getByRole("button", { name: "Revoke key Browser key" }).click();
    await withinPromise(1000, () => call(stack.baseUrl, "GET", "/user", { token }), (a) => a.status === 401, "the revoked key's refusal", revokedAt);
    await page.getByRole("cell", { name: "revoked" }).waitFor();
  });
}, 60_000);

test("a member invited with view access to one project signs in from the mailed link and is refused an article there", async () => {
  const email = `view-one-${Date.now()}@example.com`;
  const { page } = owner;
  await step(page, "invite", async () => {
    await page.getByRole("link", { name: "Members" }).click();
    await page.getByRole("heading", { name: "Members", level: 1 }).waitFor();
    await page.getByLabel("Email", { exact: true }).fill(email);
    await page.getByLabel(/^Role \(viewer/).selectOption("editor");
    await page.getByLabel("Access of the invitee to Test project").selectOption("view");
    await page.getByRole("button", { name: "Invite" }).click();
    // The link is shown to the inviter, and the invitee is mailed one of their own.
    await page.getByTestId("invite-link").waitFor();
    await page.getByText("An invitation with a link of its own is mailed to them too").waitFor();
    expect(await page.getByLabel(`Access of ${email} to Test project`).inputValue()).toBe("view");
  });
  const mail = await stack.mailbox!.waitFor(email);
  const member = await openTab(browser, stack.baseUrl);
  await step(member.page, "view-only-member", async () => {
    await setPasswordFrom(member, linkAddress(stack, linkTokenIn(mail)));
    await member.page.getByLabel("Title").fill("A view-only attempt");
    await member.page.locator('select[name="project"]').selectOption(String(tenant.projectId));
    await member.page.getByRole("button", { name: "Create article" }).click();
    await member.page.getByRole("alert").filter({ hasText: "This action is unauthorized." }).waitFor();
    // Members are not theirs to see.
    expect(await member.page.getByRole("link", { name: "Members" }).count()).toBe(0);
  });
  expect(member.pageErrors).toEqual([]);
  await member.context.close();
  await step(page, "members-listed", async () => {
    await page.reload();
    await page.getByRole("cell", { name: email, exact: true }).waitFor();
  });
}, 60_000);

test("signing out ends the session", async () => {
  const { page, context } = owner;
  await step(page, "sign-out", async () => {
    const [cookie] = await context.cookies();
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in", level: 1 }).waitFor();
    const reused = await call(stack.baseUrl, "GET", "/dashboard/api/session", { headers: { cookie: `${cookie!.name}=${cookie!.value}` } });
    expect(reused.status).toBe(401);
    // And signing in with the password works again.
    await page.getByLabel("Email").fill(tenant.email);
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Articles", level: 1 }).waitFor();
  });
  expect(owner.pageErrors).toEqual([]);
}, 60_000);
