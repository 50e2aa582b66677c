// /docs in headless Chromium with every request outside the gateway refused: the reference page,
// served from the pinned viewer bundle, renders the endpoints and their fields.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chromium, type Browser } from "playwright-core";
import { useStack, type TestStack } from "../harness/stack.ts";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

let stack: TestStack;
let browser: Browser;

beforeAll(async () => {
  stack = await useStack();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: FLAGS });
});

afterAll(async () => {
  await browser?.close();
});

test("the page renders the endpoints and their fields with nothing from another origin", async () => {
  const origin = new URL(stack.baseUrl).origin;
  const page = await browser.newPage();
  const refused: string[] = [];
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(`${origin}/`) || url.startsWith("blob:") || url.startsWith("data:")) return route.continue();
    refused.push(url);
    return route.abort();
  });
  const response = await page.goto(`${stack.baseUrl}/docs`);
  expect(response!.status()).toBe(200);
  expect(await response!.text()).not.toMatch(/https?:\/\/(?!localhost|127\.0\.0\.1)/);
  // The operation's own heading in the main panel (the menu's entry is collapsed).
  await page.locator("h2", { hasText: "Create an article and start its generation" }).first().waitFor({ timeout: 30_000 });
  const text = await page.locator("body").innerText();
  for (const expected of ["/v1/articles", "/v1/projects/{project}/workflows", "target_word_count", "point_of_view", "Idempotency-Key", "bearerAuth"]) {
    expect(text).toContain(expected);
  }
  // The request body's fields of the opened operation, with their bounds.
  expect(text).toMatch(/post\s*\/v1\/articles/i);
  expect(refused).toEqual([]);
  await page.close();
}, 60_000);
