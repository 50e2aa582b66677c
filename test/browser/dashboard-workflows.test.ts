// Custom workflows, destinations and webhook endpoints in Chromium: steps added with icons, renamed,
// reordered, duplicated and deleted from the page, as /v1 then reads them; a destination refused
// shows the API's error; a webhook endpoint added from the page receives a signed test event and
// the page shows its delivery; and the dashboard works keyboard-only and at phone width.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { apiClient } from "../harness/http.ts";
import { linkAddress, linkTokenFor } from "../harness/dashboard.ts";
import { Webhook } from "standardwebhooks";
import { startReceiver, type Receiver } from "../harness/webhook-receiver.ts";
import { launchBrowser, openTab, setPasswordFrom, step, TEST_PASSWORD, type DashboardTab } from "./browser-kit.ts";

let stack: TestStack;
let tenant: Tenant;
let browser: Browser;
let tab: DashboardTab;
let receiver: Receiver;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  browser = await launchBrowser();
  tab = await openTab(browser, stack.baseUrl);
  await setPasswordFrom(tab, linkAddress(stack, await linkTokenFor(stack, tenant.userId)));
});

afterAll(async () => {
  receiver?.stop();
  await browser?.close();
});

const stepsOf = async (slug: string) => {
  const res = await apiClient(stack.baseUrl, tenant.token).get(`/v1/projects/${tenant.projectId}/workflows?article_type=${slug}`);
  return (res.body.data[0]?.steps ?? []).map((s: any) => `${s.step_number}:${s.step_name}:${s.step_icon}`);
};

test("workflow steps are added with icons, renamed, reordered, duplicated and deleted from the page", async () => {
  const { page } = tab;
  await step(page, "workflows", async () => {
    await page.getByRole("link", { name: "Workflows" }).click();
    await page.getByRole("heading", { name: "Custom workflows", level: 1 }).waitFor();
    for (const [n, name, icon] of [["1", "Outline", "list"], ["2", "Draft", "pencil"]]) {
      await page.getByLabel("Workflow (article type slug)").fill("recipe");
      await page.getByLabel("Step number").fill(n!);
      await page.getByLabel("Step name").fill(name!);
      await page.getByLabel("Icon name (optional)").fill(icon!);
      await page.getByLabel("System prompt").fill("You write recipes.");
      await page.getByLabel("User prompt").fill(`${name} a recipe titled {title}.`);
      await page.getByRole("button", { name: "Add step" }).click();
      await page.getByRole("textbox", { name: `Name of step ${n}` }).waitFor();
    }
    expect(await stepsOf("recipe")).toEqual(["1:Outline:list", "2:Draft:pencil"]);
    await page.getByRole("textbox", { name: "Name of step 2" }).fill("Write");
    await page.getByRole("button", { name: "Save step 2" }).click();
    await page.getByRole("status").filter({ hasText: "Step 2 saved." }).waitFor();
    await page.getByRole("button", { name: "Move down step 1" }).click();
    await page.getByRole("status").filter({ hasText: "Outline moved." }).waitFor();
    expect(await stepsOf("recipe")).toEqual(["1:Write:pencil", "2:Outline:list"]);
    await page.getByLabel("Copy of (a custom or built-in type)").fill("recipe");
    await page.getByLabel("New article type").fill("recipe_copy");
    await page.getByRole("button", { name: "Duplicate" }).click();
    await page.getByRole("heading", { name: "recipe_copy", level: 2 }).waitFor();
    expect(await stepsOf("recipe_copy")).toEqual(["1:Write:pencil", "2:Outline:list"]);
    await page.getByRole("button", { name: "Delete step 2" }).first().click();
    await page.getByRole("status").filter({ hasText: "Workflow step deleted." }).waitFor();
    expect(await stepsOf("recipe")).toEqual(["1:Write:pencil"]);
  });
  expect(tab.pageErrors).toEqual([]);
}, 60_000);

test("a destination the API refuses shows its error, and nothing is added", async () => {
  const { page } = tab;
  await step(page, "destinations", async () => {
    await page.getByRole("link", { name: "Destinations" }).click();
    await page.getByRole("heading", { name: "Destinations", level: 1 }).waitFor();
    await page.getByLabel("Name", { exact: true }).fill("Blog");
    await page.getByLabel("Site address").fill("ftp://blog.example.com");
    await page.getByRole("button", { name: "Add destination" }).click();
    await page.getByRole("alert").filter({ hasText: /site_url/ }).waitFor();
    expect((await apiClient(stack.baseUrl, tenant.token).get(`/v1/projects/${tenant.projectId}/destinations`)).body.data).toEqual([]);
  });
}, 60_000);

test("a webhook endpoint added on the page receives a signed test event, and the page shows the delivery", async () => {
  const { page } = tab;
  receiver = startReceiver();
  const hook = receiver.hook(() => new Response("received by the test"));
  // The refused destination before left its 422 in the console: only this test's errors count.
  const errorsBefore = tab.pageErrors.length;
  await step(page, "webhooks", async () => {
    await page.getByRole("link", { name: "Webhooks" }).click();
    await page.getByRole("heading", { name: "Webhook endpoints", level: 1 }).waitFor();
    await page.getByLabel("Endpoint URL").fill(hook.url);
    await page.getByRole("checkbox", { name: "article.failed" }).check();
    await page.getByRole("button", { name: "Add endpoint" }).click();
    const secret = (await page.getByTestId("new-secret").textContent())!;
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole("button", { name: `Send a test event to ${hook.url}` }).click();
    await page.getByRole("status").filter({ hasText: "Test event queued" }).waitFor();
    const [received] = await hook.waitForRequests(1, 15_000);
    expect(new Webhook(secret).verify(received!.body, received!.headers)).toMatchObject({ type: "webhook.test" });
    await page.getByRole("link", { name: `Deliveries of ${hook.url}` }).click();
    await page.getByRole("heading", { name: "Deliveries", level: 1 }).waitFor();
    // The attempt is logged just after the receiver answered: the page is refreshed until it shows.
    const answered = page.getByRole("cell", { name: "received by the test" });
    for (let i = 0; i < 20 && !(await answered.isVisible()); i++) {
      await page.getByRole("button", { name: "Refresh deliveries" }).click();
      await answered.waitFor({ timeout: 500 }).catch(() => {});
    }
    await answered.waitFor({ timeout: 1_000 });
    await page.getByRole("cell", { name: "200", exact: true }).waitFor();
    await page.getByRole("button", { name: /^Redeliver webhook\.test delivery/ }).click();
    await page.getByRole("status").filter({ hasText: "Redelivery queued." }).waitFor();
    const [, again] = await hook.waitForRequests(2, 15_000);
    expect(again!.headers["webhook-id"]).toBe(received!.headers["webhook-id"]);
  });
  expect(tab.pageErrors.slice(errorsBefore)).toEqual([]);
}, 60_000);

test("signing in and creating a key work keyboard-only, and the pages fit a phone's width", async () => {
  const phone = await browser.newContext({ viewport: { width: 375, height: 800 } });
  const page = await phone.newPage();
  try {
    await step(page, "keyboard", async () => {
      await page.goto(`${stack.baseUrl}/dashboard/`);
      await page.getByRole("heading", { name: "Sign in", level: 1 }).waitFor();
      // The page's heading holds the focus: Tab to each control, type, Enter submits.
      await page.keyboard.press("Tab");
      await page.keyboard.type(tenant.email);
      await page.keyboard.press("Tab");
      await page.keyboard.type(TEST_PASSWORD);
      await page.keyboard.press("Enter");
      await page.getByRole("heading", { name: "Articles", level: 1 }).waitFor();
      const headings: Record<string, string | RegExp> = { articles: "Articles", workflows: "Custom workflows", destinations: "Destinations", webhooks: "Webhook endpoints", keys: "API keys", usage: /^Usage for /, members: "Members", settings: "Settings" };
      for (const [path, heading] of Object.entries(headings)) {
        await page.goto(`${stack.baseUrl}/dashboard/#/${path}`);
        await page.getByRole("heading", { name: heading, level: 1 }).waitFor();
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
        expect({ path, overflow }).toEqual({ path, overflow: 0 });
      }
      await page.goto(`${stack.baseUrl}/dashboard/#/keys`);
      await page.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
      await page.getByLabel("Name").focus();
      await page.keyboard.type("Keyboard key");
      await page.keyboard.press("Enter");
      expect(await page.getByTestId("new-token").textContent()).toMatch(/^agk_/);
    });
  } finally {
    await phone.close();
  }
}, 60_000);
