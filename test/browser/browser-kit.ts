// Debian's Chromium driven by Playwright for the dashboard's browser suite: launched headless
// (deploy/scripts/ensure-chromium.sh installs it when missing), every request to another origin
// refused and recorded, and a screenshot of the page written to test-output/browser/ when a
// step fails, named after the step.
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];
export const SCREENSHOTS = fileURLToPath(new URL("../../test-output/browser/", import.meta.url));

export const launchBrowser = (): Promise<Browser> => chromium.launch({ executablePath: CHROMIUM, args: FLAGS });

export interface DashboardTab {
  context: BrowserContext;
  page: Page;
  /** Requests to any other origin than the gateway's (none may happen). */
  elsewhere: string[];
  /** Errors the page's scripts threw, and the console's errors (a CSP refusal among them). */
  pageErrors: string[];
}

/** A fresh browser profile (its own cookies) on one tab, allowed to reach the gateway only. */
export async function openTab(browser: Browser, baseUrl: string): Promise<DashboardTab> {
  const origin = new URL(baseUrl).origin;
  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  const page = await context.newPage();
  const elsewhere: string[] = [];
  const pageErrors: string[] = [];
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (url.startsWith(`${origin}/`)) return route.continue();
    elsewhere.push(url);
    return route.abort();
  });
  page.on("pageerror", (error) => pageErrors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error" && !/status of 40\d/.test(message.text())) pageErrors.push(message.text());
  });
  return { context, page, elsewhere, pageErrors };
}

/** Runs a step; when it fails, the page as it was is saved as test-output/browser/<name>.png. */
export async function step<T>(page: Page, name: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    mkdirSync(SCREENSHOTS, { recursive: true });
    await page.screenshot({ path: `${SCREENSHOTS}${name.replace(/[^A-Za-z0-9_-]+/g, "-")}.png`, fullPage: true }).catch(() => {});
    throw error;
  }
}

export const TEST_PASSWORD = "correct horse battery";

/** Sets the password on a one-time link's page; the articles page shows once signed in. */
export async function setPasswordFrom(tab: DashboardTab, link: string): Promise<void> {
  await tab.page.goto(link);
  await tab.page.getByLabel("New password (at least 10 characters)").fill(TEST_PASSWORD);
  await tab.page.getByRole("button", { name: "Set password and sign in" }).click();
  await tab.page.getByRole("heading", { name: "Articles", level: 1 }).waitFor();
}
