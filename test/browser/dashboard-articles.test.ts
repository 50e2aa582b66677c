// The dashboard's articles and usage in Chromium: an article created from the page is watched
// to completion live over the event stream; the usage page shows the ledger's words; a title,
// content and step name carrying <script> and <img onerror> render inert (asserted in the DOM); an
// article is edited on its page and an earlier version restored; one section is revised there;
// a forged cross-site POST from another site's page is refused and changes nothing.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { createArticle } from "../harness/articles.ts";
import { eventually } from "../harness/eventually.ts";
import { linkAddress, linkTokenFor } from "../harness/dashboard.ts";
import { articleBody, createWorkflow } from "../api/generation-support.ts";
import { launchBrowser, openTab, setPasswordFrom, step, type DashboardTab } from "./browser-kit.ts";

const HOSTILE = `<script>window.__pwned = "script"</script><img src=x onerror="window.__pwned = 'img'">`;

let stack: TestStack;
let tenant: Tenant;
let api: ApiClient;
let browser: Browser;
let tab: DashboardTab;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
  browser = await launchBrowser();
  tab = await openTab(browser, stack.baseUrl);
  await setPasswordFrom(tab, linkAddress(stack, await linkTokenFor(stack, tenant.userId)));
});

afterAll(async () => {
  await browser?.close();
});

test("an article created from the page completes live, and the usage page shows its words", async () => {
  const { page } = tab;
  // Two slow steps, so the page watches the article while it is written.
  await createWorkflow(api, tenant.projectId, "slow-brew", [
    { user: "[[sim:sleep=1500]][[sim:words=120]] Outline the brew." },
    { user: "[[sim:sleep=1500]][[sim:words=150]] Write the brew guide." },
  ]);
  const id = await step(page, "article-create", async () => {
    await page.getByLabel("Title").fill("Slow pour-over guide");
    await page.getByLabel(/^Article type/).fill("slow-brew");
    await page.getByLabel("Target word count").fill("150");
    await page.getByRole("button", { name: "Create article" }).click();
    await page.waitForURL(/#\/articles\/\d+$/);
    return Number(page.url().split("/").pop());
  });
  await step(page, "article-live", async () => {
    // Progress arrives over the stream, and the status turns without a reload.
    await page.getByTestId("progress").locator("li").first().waitFor();
    await page.getByTestId("article-status").filter({ hasText: "completed" }).waitFor({ timeout: 30_000 });
    await page.getByTestId("article-rendered").waitFor();
    expect((await page.getByTestId("progress").innerText()).toLowerCase()).toContain("step started");
  });
  const completed = (await api.get(`/v1/articles/${id}`)).body.data;
  expect(completed.status).toBe("completed");
  await step(page, "usage", async () => {
    await page.getByRole("link", { name: "Usage" }).click();
    await page.getByRole("heading", { name: /^Usage for / }).waitFor();
    const usage = (await api.get("/v1/usage")).body.data;
    expect(usage.settled_words).toBe(completed.actual_word_count);
    expect(await page.getByTestId("settled-words").textContent()).toBe(String(usage.settled_words));
    expect(await page.getByTestId("remaining-words").textContent()).toBe(String(usage.remaining_words));
    expect(await page.locator("svg.chart rect").count()).toBe(1);
  });
  expect(tab.elsewhere).toEqual([]);
  expect(tab.pageErrors).toEqual([]);
}, 60_000);

test("the list's articles in progress turn completed live", async () => {
  const { page } = tab;
  const article = await createArticle(api, articleBody(tenant.projectId, { title: "Listed while writing", article_type: "slow-brew", target_word_count: 150 }));
  await step(page, "list-live", async () => {
    await page.goto(`${stack.baseUrl}/dashboard/#/articles`);
    await page.reload();
    await page.getByRole("heading", { name: "Articles", level: 1 }).waitFor();
    const cell = page.getByTestId(`status-${article.id}`);
    expect(await cell.textContent()).not.toBe("completed");
    await cell.filter({ hasText: "completed" }).waitFor({ timeout: 30_000 });
  });
}, 60_000);

test("a title, content and step name carrying <script> and <img onerror> render inert", async () => {
  const { page } = tab;
  await createWorkflow(api, tenant.projectId, "hostile-brew", [{ step_name: `Step ${HOSTILE}`, user: `[[sim:echo]]Content ${HOSTILE} ends here.` }]);
  const article = await createArticle(api, articleBody(tenant.projectId, { title: `Beans ${HOSTILE}`, article_type: "hostile-brew", target_word_count: 100 }));
  await eventually(() => api.get(`/v1/articles/${article.id}`), (r) => r.body.data.status === "completed", 30_000, "the hostile article completed");
  await step(page, "hostile", async () => {
    // Read afresh (the page may be on the list already, where a same address changes nothing).
    await page.goto(`${stack.baseUrl}/dashboard/#/articles`);
    await page.reload();
    await page.getByRole("link", { name: `Beans ${HOSTILE}` }).waitFor();
    await page.goto(`${stack.baseUrl}/dashboard/#/articles/${article.id}`);
    await page.getByTestId("article-rendered").getByText("ends here").waitFor();
    expect(await page.getByTestId("article-title").textContent()).toBe(`Beans ${HOSTILE}`);
    // The Markdown source, as text (under a closed "Markdown source").
    expect(await page.getByTestId("article-content").textContent()).toContain(HOSTILE);
    expect(await page.locator("main").innerText()).toContain(`Step ${HOSTILE}`);
    // Nothing the tenant or the model wrote ran or carries a handler: the rendered content is the
    // service's sanitised HTML (an <img> may stay, without its onerror), everything else is text.
    expect(await page.locator("main script").count()).toBe(0);
    const handlers = await page.locator("main *").evaluateAll((elements) => elements.flatMap((e) => e.getAttributeNames().filter((n) => n.startsWith("on")).map((n) => `${e.tagName} ${n}`)));
    expect(handlers).toEqual([]);
    expect(await page.locator("main img:not([data-testid='article-rendered'] img)").count()).toBe(0);
    expect(await page.evaluate(() => (window as { __pwned?: string }).__pwned)).toBeUndefined();
  });
}, 60_000);

test("an article is edited on its page as a new version, and an earlier version restored", async () => {
  const { page } = tab;
  await createWorkflow(api, tenant.projectId, "versioned-brew", [{ step_name: "Write", user: "[[sim:echo]]# Brewing at home\n\nThe first draft, as generated." }]);
  const article = await createArticle(api, articleBody(tenant.projectId, { title: "Brewing at home", article_type: "versioned-brew", target_word_count: 100 }));
  await eventually(() => api.get(`/v1/articles/${article.id}`), (r) => r.body.data.status === "completed", 30_000, "the article completed");
  await step(page, "article-versions", async () => {
    await page.goto(`${stack.baseUrl}/dashboard/#/articles/${article.id}`);
    // This article's page (the one before had a version 1 too), then its versions, added after its content.
    await page.getByTestId("article-title").filter({ hasText: "Brewing at home" }).waitFor();
    await page.getByTestId("version-1").getByText("current").waitFor();
    await page.getByLabel("Content (Markdown)").fill("# Brewed by hand\n\nA paragraph written in the dashboard.");
    await page.getByRole("button", { name: "Save as a new version" }).click();
    await page.getByTestId("article-rendered").getByRole("heading", { name: "Brewed by hand" }).waitFor();
    expect(await page.getByTestId("version-2").innerText()).toContain("edited");
    await page.getByRole("button", { name: "Restore version 1" }).click();
    await page.getByTestId("version-3").getByText("current").waitFor();
    await page.getByTestId("article-rendered").getByText("The first draft, as generated.").waitFor();
  });
  const restored = (await api.get(`/v1/articles/${article.id}`)).body.data;
  const versions = (await api.get(`/v1/articles/${article.id}/versions`)).body.data;
  expect(versions.map((v: { number: number; kind: string }) => `${v.number} ${v.kind}`)).toEqual(["1 generated", "2 edited", "3 restored"]);
  expect(restored.current_version_id).toBe(versions[2].id);
  expect(restored.content).toBe(restored.original_content);
}, 60_000);

test("one section is revised from the article's page: a new version where only that section changed", async () => {
  const { page } = tab;
  const first = "Grind size sets how fast water pulls flavour from the coffee.";
  await createWorkflow(api, tenant.projectId, "sectioned-brew", [{ step_name: "Write", user: `[[sim:echo]]# Brewing by the section\n\nAn opening.\n\n## Grind\n\n${first}\n\n## Water\n\nSoft water at ninety-four degrees.` }]);
  const article = await createArticle(api, articleBody(tenant.projectId, { title: "Brewing by the section", article_type: "sectioned-brew", target_word_count: 100 }));
  await eventually(() => api.get(`/v1/articles/${article.id}`), (r) => r.body.data.status === "completed", 30_000, "the article completed");
  await step(page, "section-revisions", async () => {
    await page.goto(`${stack.baseUrl}/dashboard/#/articles/${article.id}`);
    await page.getByTestId("article-title").filter({ hasText: "Brewing by the section" }).waitFor();
    await page.getByRole("combobox", { name: /^Section/ }).selectOption("2");
    await page.getByRole("combobox", { name: /^Action/ }).selectOption("rewrite");
    await page.getByLabel("Instruction").fill("Say why the temperature matters.");
    await page.getByRole("button", { name: "Queue the revision" }).click();
    // Queued, then the page shows the article again once the revision ended.
    await page.getByTestId("revision-1").getByText("completed").waitFor({ timeout: 30_000 });
    await page.getByTestId("version-2").getByText("section_rewrite").waitFor();
  });
  const revised = (await api.get(`/v1/articles/${article.id}`)).body.data;
  expect(revised.content).toContain(`## Grind\n\n${first}\n\n## Water`);
  expect(revised.content.split("## Water")[1]!.trim()).not.toBe("Soft water at ninety-four degrees.");
  const versions = (await api.get(`/v1/articles/${article.id}/versions`)).body.data;
  expect(versions.map((v: { number: number; kind: string }) => `${v.number} ${v.kind}`)).toEqual(["1 generated", "2 section_rewrite"]);
}, 60_000);

test("a forged cross-site POST from another site's page is refused and changes nothing", async () => {
  // Another site: its page posts a form to the dashboard's key endpoint as soon as it loads.
  const target = `${stack.baseUrl}/dashboard/api/keys`;
  const evil = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () =>
      new Response(`<!doctype html><form method="post" action="${target}" enctype="text/plain"><input name='{"name":"forged","x":"' value='"}'></form><script>document.forms[0].submit()</script>`, {
        headers: { "content-type": "text/html" },
      }),
  });
  // localhost is another site than 127.0.0.1 (the gateway's address), as a browser counts sites.
  const evilTab = await browser.newPage();
  const context = evilTab.context();
  await context.addCookies(await tab.context.cookies());
  try {
    const answer = evilTab.waitForResponse((r) => r.url() === target);
    await evilTab.goto(`http://localhost:${evil.port}/`);
    const response = await answer;
    // SameSite=Lax keeps the session cookie off the cross-site POST, and the CSRF check refuses it anyway.
    expect([401, 403]).toContain(response.status());
  } finally {
    await context.close();
    evil.stop(true);
  }
  await step(tab.page, "csrf", async () => {
    await tab.page.goto(`${stack.baseUrl}/dashboard/#/keys`);
    await tab.page.getByRole("heading", { name: "API keys", level: 1 }).waitFor();
    expect(await tab.page.locator("main").innerText()).not.toContain("forged");
  });
}, 60_000);
