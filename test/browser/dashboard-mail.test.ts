// The dashboard's mail in Chromium, with the shared stack's local SMTP server: "forgot password"
// from the sign-in page mails a link whose page sets a new password and signs in; an owner
// invites a member with view access to one project from the members page, the invitation's
// mailed link signs the member in, and the member is refused an article in that project while
// creating one in a project they update.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createProject, createTenant, type Tenant } from "../harness/tenants.ts";
import { linkAddress, linkTokenFor } from "../harness/dashboard.ts";
import { linkTokenIn } from "../harness/mailbox.ts";
import { launchBrowser, openTab, setPasswordFrom, step, type DashboardTab } from "./browser-kit.ts";

let stack: TestStack;
let tenant: Tenant;
let browser: Browser;
let owner: DashboardTab;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  browser = await launchBrowser();
  owner = await openTab(browser, stack.baseUrl);
  await setPasswordFrom(owner, linkAddress(stack, await linkTokenFor(stack, tenant.userId)));
});

afterAll(async () => {
  await browser?.close();
});

test("forgot password: the sign-in page's form mails a link, and its page sets a new password and signs in", async () => {
  const t = await createTenant(stack);
  const tab = await openTab(browser, stack.baseUrl);
  const { page } = tab;
  await step(page, "forgot-password", async () => {
    await page.goto(`${stack.baseUrl}/dashboard/`);
    await page.getByRole("link", { name: "Forgot your password?" }).click();
    await page.getByRole("heading", { name: "Forgot your password?", level: 1 }).waitFor();
    await page.getByLabel("Email").fill(t.email);
    await page.getByRole("button", { name: "Mail me a link" }).click();
    await page.getByRole("heading", { name: "Check your mail", level: 1 }).waitFor();
  });
  const mail = await stack.mailbox!.waitFor(t.email);
  await step(page, "reset-link", async () => {
    await setPasswordFrom(tab, linkAddress(stack, linkTokenIn(mail)));
    await page.getByText(t.email).first().waitFor();
  });
  expect(tab.elsewhere).toEqual([]);
  expect(tab.pageErrors).toEqual([]);
  await tab.context.close();
}, 60_000);

test("a member invited with view access to one project signs in from the mailed link and is refused an article there", async () => {
  const other = await createProject(stack, tenant.accountId, "Open project");
  const email = `view-one-${Date.now()}@example.com`;
  const { page } = owner;
  await step(page, "invite-view-only", async () => {
    await page.getByRole("link", { name: "Members" }).click();
    await page.getByRole("heading", { name: "Members", level: 1 }).waitFor();
    await page.getByLabel("Email", { exact: true }).fill(email);
    await page.getByLabel(/^Role \(viewer/).selectOption("editor");
    await page.getByLabel("Access of the invitee to Test project").selectOption("view");
    await page.getByRole("button", { name: "Invite" }).click();
    await page.getByText("An invitation with a link of its own is mailed to them too").waitFor();
    await page.getByLabel(`Access of ${email} to Test project`).waitFor();
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
    await member.page.locator('select[name="project"]').selectOption(String(other));
    await member.page.getByRole("button", { name: "Create article" }).click();
    await member.page.waitForURL(/#\/articles\/\d+/);
  });
  expect(member.pageErrors).toEqual([]);
  await member.context.close();
}, 60_000);
