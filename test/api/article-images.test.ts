// Article images as a reader gets them (spec 2.2, 3, 4.1, 8): placed in the content with alt text,
// served at stable unguessable URLs without an API key, listed on the article, sized in the
// completion webhook's HTML; generated once per position in the preset's style, retried, left out
// (and recorded) only on the last attempt, never generated twice across a killed runner; stored in
// Postgres by default and in an S3-compatible bucket when one is configured.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { S3Client } from "bun";
import S3rver from "s3rver";
import { startStack } from "../../deploy/local/stack.ts";
import { createArticle } from "../harness/articles.ts";
import { eventually } from "../harness/eventually.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { storeClient } from "../harness/service-clients.ts";
import { dropTestData, TEST_STACK_ENV, useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { startReceiver, type Hook, type Receiver } from "../harness/webhook-receiver.ts";
import { articleBody, createWorkflow, finished, marker, runOf, waitForArticle } from "./generation-support.ts";

let stack: TestStack;
let tenant: Tenant;
let api: ApiClient;
let receiver: Receiver;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
  receiver = startReceiver();
});

afterAll(() => receiver?.stop());

/** The size each aspect ratio is asked for (services/generation-runner/README.md). */
const SIZE_OF: Record<string, [number, number]> = { "1:1": [1024, 1024], "16:9": [1536, 1024], "4:3": [1536, 1024], "9:16": [1024, 1536], "3:4": [1024, 1536] };

/** A long enough article that it has several sections. */
const illustrated = (extra: Record<string, unknown>) => articleBody(tenant.projectId, { target_word_count: 700, ...extra });

/** Markdown images in order: [alt, url]. */
const markdownImages = (markdown: string) => [...markdown.matchAll(/!\[([^\]]*)\]\(([^)\s]+)\)/g)].map((m) => [m[1], m[2]]);

const decodeEntities = (text: string) => text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&#x27;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");

/** <img> elements of HTML: their attributes, entities decoded. */
const htmlImages = (html: string) =>
  [...html.matchAll(/<img\b([^>]*)>/g)].map((m) => Object.fromEntries([...m[1]!.matchAll(/([a-z-]+)="([^"]*)"/g)].map((a) => [a[1], decodeEntities(a[2]!)])));

/** Width and height from a PNG's header. */
function pngSize(bytes: Uint8Array): [number, number] {
  const png = Buffer.from(bytes);
  expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  expect(png.subarray(12, 16).toString("ascii")).toBe("IHDR");
  return [png.readUInt32BE(16), png.readUInt32BE(20)];
}

/** Fetches an image URL as a browser would: no API key. */
async function fetchImage(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
}

/** The image prompts the simulator received containing `m`. */
async function imagePrompts(target: { simulatorUrl?: string }, m: string): Promise<{ prompt: string; count: number }[]> {
  const res = await fetch(`${target.simulatorUrl}/_sim/image-prompts?contains=${encodeURIComponent(m)}`);
  return ((await res.json()) as { calls: { prompt: string; count: number }[] }).calls;
}

async function imagePreset(style: string): Promise<number> {
  const { imagePreset } = await storeClient(stack, "operator").createImagePreset({ projectId: BigInt(tenant.projectId), name: `Preset ${marker()}`, style });
  return Number(imagePreset!.id);
}

/** Everything a reader checks of a finished article's images; returns the served bytes by URL. */
async function expectServedImages(baseUrl: string, article: any, count: number, ratio: string): Promise<Map<string, Uint8Array>> {
  const [width, height] = SIZE_OF[ratio]!;
  expect(article.images.map((i: any) => i.position)).toEqual(Array.from({ length: count }, (_, i) => i + 1));
  const served = new Map<string, Uint8Array>();
  for (const image of article.images) {
    expect(image).toEqual({ url: expect.any(String), alt: expect.any(String), width, height, aspect_ratio: ratio, position: expect.any(Number) });
    expect(image.alt.length).toBeGreaterThan(0);
    expect(image.url).toMatch(new RegExp(`^${baseUrl}/images/[0-9a-f]{32}\\.png$`));
    const { res, bytes } = await fetchImage(image.url);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("image/png");
    expect(Number(res.headers.get("content-length"))).toBe(bytes.length);
    expect(res.headers.get("etag")).toMatch(/^"[0-9a-f]{64}"$/);
    expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(pngSize(bytes)).toEqual([width, height]);
    served.set(image.url, bytes);
    // A client holding the image is told it has not changed.
    const again = await fetch(image.url, { headers: { "if-none-match": res.headers.get("etag")! } });
    expect(again.status).toBe(304);
  }
  // Each image has an id of its own.
  expect(new Set(article.images.map((i: any) => i.url)).size).toBe(count);
  return served;
}

/** The content shows exactly the article's images, in position order, with their alt text. */
function expectImagesInContent(markdown: string, article: any) {
  expect(markdownImages(markdown)).toEqual(article.images.map((i: any) => [i.alt, i.url]));
}

describe("article images", () => {
  test("image_count 0 to 5 over every aspect ratio: that many images of the right size, at key-less URLs, in the content and the webhook's HTML", async () => {
    const cases = [
      { count: 0, ratio: "16:9" },
      { count: 1, ratio: "1:1" },
      { count: 2, ratio: "16:9" },
      { count: 3, ratio: "9:16" },
      { count: 4, ratio: "3:4" },
      { count: 5, ratio: "4:3" },
    ];
    const hooks: Hook[] = cases.map(() => receiver.hook());
    const created = await Promise.all(
      cases.map((c, i) => createArticle(api, illustrated({ title: `Brewing coffee at home, part ${i + 1}`, image_count: c.count, image_aspect_ratio: c.ratio, webhook_url: hooks[i]!.url }))),
    );
    expect(created.every((a) => Array.isArray(a.images) && a.images.length === 0)).toBe(true);
    const done = await Promise.all(created.map((a) => waitForArticle(api, a.external_id, finished, 90_000)));

    for (const [i, c] of cases.entries()) {
      const article = done[i]!;
      expect(article.status).toMatch(/^(completed|published)$/);
      expect(article.images).toHaveLength(c.count);
      const served = await expectServedImages(stack.baseUrl, article, c.count, c.ratio);
      expectImagesInContent(article.content, article);
      expectImagesInContent(article.original_content, article);

      if (c.count > 0) {
        // The featured image follows the introduction, before the first section; the others come after it.
        const sections = article.content.indexOf("\n## ");
        const intro = article.content.indexOf("\n\n", article.content.indexOf("# "));
        const first = article.content.indexOf(article.images[0].url);
        expect(first).toBeGreaterThan(intro);
        expect(first).toBeLessThan(sections);
        for (const later of article.images.slice(1)) expect(article.content.indexOf(later.url)).toBeGreaterThan(sections);
        // The featured image's alt is the article's title; the others name their section, each in words of its own.
        expect(article.images[0].alt).toBe(article.title);
        const headings: string[] = [...article.content.matchAll(/^## (.+)$/gm)].map((h) => h[1]);
        for (const later of article.images.slice(1)) expect(headings.some((h) => later.alt.startsWith(h))).toBe(true);
        expect(new Set(article.images.map((img: any) => img.alt)).size).toBe(c.count);
      } else {
        expect(article.content).not.toContain("![");
      }

      // The completion webhook: the same images in data, sized <img> elements in the sanitised HTML.
      const [delivery] = await hooks[i]!.waitForRequests(1, 20_000);
      const payload = delivery!.json;
      expect(payload.data.images).toEqual(article.images);
      expect(payload.content.markdown).toBe(article.content);
      expect(htmlImages(payload.content.html)).toEqual(article.images.map((img: any) => ({ src: img.url, alt: img.alt, width: String(img.width), height: String(img.height) })));
      expect(payload.content.html).not.toContain("base64");
      expect([...served.keys()].every((url) => payload.content.html.includes(url))).toBe(true);
    }

    // The list shows the same images with the article.
    const listed = await api.get(`/v1/articles?project_id=${tenant.projectId}&per_page=100`);
    const entry = listed.body.data.find((a: any) => a.external_id === done[5]!.external_id);
    expect(entry.images).toEqual(done[5]!.images);
  }, 120_000);

  test("a guessed, malformed or re-extended image URL is 404; a real one needs no key", async () => {
    const article = await waitForArticle(api, (await createArticle(api, illustrated({ image_count: 1 }))).external_id, finished, 60_000);
    const url: string = article.images[0].url;
    const got = await fetch(url);
    expect(got.status).toBe(200);
    // HEAD tells a CMS the type and size without the bytes.
    const head = await fetch(url, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("image/png");
    expect(head.headers.get("content-length")).toBe(String((await got.arrayBuffer()).byteLength));
    for (const path of [`/images/${randomBytes(16).toString("hex")}.png`, "/images/abc.png", `/images/${url.split("/").pop()!.replace(".png", ".jpg")}`, `/images/${url.split("/").pop()!.toUpperCase()}`]) {
      const res = await fetch(stack.baseUrl + path);
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ message: "Image not found." });
    }
  }, 90_000);

  test("the humanized version and a JSON envelope's body carry the same images", async () => {
    const type = marker("envelope");
    const schema = {
      type: "object",
      properties: { article: { type: "object", properties: { content: { type: "string" }, meta_title: { type: "string" } }, required: ["content", "meta_title"], additionalProperties: false } },
      required: ["article"],
      additionalProperties: false,
    };
    await createWorkflow(api, tenant.projectId, type, [{ user: "Write a 700 word article about {title}", output_format: "json", json_schema: schema }]);
    const hook = receiver.hook();
    const [humanized, enveloped] = await Promise.all([
      createArticle(api, illustrated({ title: "Descaling an espresso machine", image_count: 3, image_aspect_ratio: "16:9", humanize: true })),
      createArticle(api, illustrated({ title: "Storing coffee beans", article_type: type, image_count: 2, image_aspect_ratio: "1:1", webhook_url: hook.url })),
    ]);

    const human = await waitForArticle(api, humanized.external_id, finished, 90_000);
    expect(human.content).not.toBe(human.original_content);
    expect(human.images).toHaveLength(3);
    expectImagesInContent(human.content, human);
    expectImagesInContent(human.original_content, human);

    const json = await waitForArticle(api, enveloped.external_id, finished, 90_000);
    const envelope = JSON.parse(json.content);
    expect(typeof envelope.article.meta_title).toBe("string");
    expectImagesInContent(envelope.article.content, json);
    await expectServedImages(stack.baseUrl, json, 2, "1:1");
    const [delivery] = await hook.waitForRequests(1, 20_000);
    expect(delivery!.json.content.format).toBe("json");
    expect(delivery!.json.content.markdown).toBe(envelope.article.content);
    expect(htmlImages(delivery!.json.content.html).map((i) => [i.src, i.width, i.height])).toEqual(json.images.map((i: any) => [i.url, "1024", "1024"]));
  }, 120_000);

  test("the preset's style reaches every image prompt; alt text comes from the article, not the prompt", async () => {
    const m = marker("style");
    const style = `Risograph print in two inks, ${m}.`;
    const created = await createArticle(api, illustrated({ title: "Cold brew for beginners", image_count: 3, image_aspect_ratio: "4:3", image_preset_id: await imagePreset(style) }));
    const done = await waitForArticle(api, created.external_id, finished, 90_000);
    const prompts = await imagePrompts(stack, m);
    expect(prompts).toHaveLength(3);
    for (const p of prompts) {
      expect(p.prompt).toContain(style);
      expect(p.count).toBe(1);
    }
    const run = await runOf(stack, created.external_id);
    expect(run!.images.map((i) => i.prompt).sort()).toEqual(prompts.map((p) => p.prompt).sort());
    expect(run!.images.map((i) => i.size)).toEqual(["1536x1024", "1536x1024", "1536x1024"]);
    for (const image of done.images) expect(image.alt).not.toContain(m);
    expect(done.images.map((i: any) => i.url)).toEqual(run!.images.map((i) => i.url));
  }, 90_000);

  test("a run killed while polishing resumes without generating its finished images again", async () => {
    const m = marker("crash");
    // Each image takes two and a half seconds; three are generated at once, so two are still to come at the kill.
    const preset = await imagePreset(`[[sim:sleep=2500]] Watercolour, ${m}.`);
    const created = await createArticle(api, illustrated({ title: "Roasting coffee in a pan", image_count: 5, image_aspect_ratio: "16:9", image_preset_id: preset }));
    const stored = await eventually(
      async () => (await runOf(stack, created.external_id).catch(() => undefined))?.images ?? [],
      (images) => images.length > 0,
      60_000,
      "a first stored image",
    );
    await stack.kill("generationRunner");
    await stack.start("generationRunner");
    // What the killed runner had stored (the job waits for its dead worker's lock to lapse first).
    const before = (await runOf(stack, created.external_id))!.images;
    expect(before.length).toBeGreaterThanOrEqual(stored.length);
    expect(before.length).toBeLessThan(5);

    const done = await waitForArticle(api, created.external_id, finished, 90_000);
    expect(done.status).toMatch(/^(completed|published)$/);
    expect(done.images).toHaveLength(5);
    const prompts = await imagePrompts(stack, m);
    for (const image of before) {
      // Stored before the kill: never asked of the model again, and still the image the article shows.
      expect(prompts.find((p) => p.prompt === image.prompt)!.count).toBe(1);
      expect(done.images[image.position - 1].url).toBe(image.url);
    }
    expect(prompts).toHaveLength(5);
    const run = await runOf(stack, created.external_id);
    expect(run!.pickups).toBe(2);
    await expectServedImages(stack.baseUrl, done, 5, "16:9");
  }, 120_000);

  test("a failing image is tried again; one that keeps failing is left out on the last attempt and recorded on the run", async () => {
    const once = marker("once");
    const always = marker("always");
    const [flaky, broken] = await Promise.all([
      createArticle(api, illustrated({ title: "Milk frothing basics", image_count: 2, image_preset_id: await imagePreset(`[[sim:fail-once]] Ink drawing, ${once}.`) })),
      createArticle(api, illustrated({ title: "Cleaning a grinder", image_count: 2, image_preset_id: await imagePreset(`[[sim:fail]] Ink drawing, ${always}.`) })),
    ]);

    const recovered = await waitForArticle(api, flaky.external_id, finished, 90_000);
    expect(recovered.images).toHaveLength(2);
    expect((await imagePrompts(stack, once)).map((p) => p.count)).toEqual([2, 2]);
    expect((await runOf(stack, flaky.external_id))!.omittedImages).toEqual([]);

    const done = await waitForArticle(api, broken.external_id, finished, 90_000);
    // The article completes without the images, and says nothing of them in its content.
    expect(done.status).toMatch(/^(completed|published)$/);
    expect(done.images).toEqual([]);
    expect(done.content).not.toContain("![");
    const tries = await imagePrompts(stack, always);
    expect(tries).toHaveLength(2);
    // Tried on every one of the job's attempts, more than once each.
    for (const t of tries) expect(t.count).toBeGreaterThan(2);
    const run = await runOf(stack, broken.external_id);
    expect(run!.omittedImages.map((o) => o.position)).toEqual([1, 2]);
    for (const omitted of run!.omittedImages) expect(omitted.reason).toContain("simulated failure");
  }, 120_000);
});

describe("images in an S3-compatible bucket", () => {
  test("with S3 settings the bytes go to the bucket and are served from it", async () => {
    const directory = mkdtempSync(join(tmpdir(), "article-images-s3-"));
    const bucket = "article-images";
    const s3 = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] });
    const { port } = await s3.run();
    const endpoint = `http://127.0.0.1:${port}`;
    const credentials = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };
    const id = `${process.pid}_${randomBytes(3).toString("hex")}`;
    const databaseUrl = `postgres://postgres@127.0.0.1:5432/articles_test_s3_${id}`;
    const redisPrefix = `test-s3-${id}`;
    let second: Awaited<ReturnType<typeof startStack>> | undefined;
    try {
      second = await startStack({
        randomPorts: true,
        output: "ignore",
        env: {
          ...TEST_STACK_ENV,
          DATABASE_URL: databaseUrl,
          REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
          REDIS_PREFIX: redisPrefix,
          OPENAI_API_KEY: undefined,
          OPENAI_BASE_URL: undefined,
          PUBLIC_BASE_URL: undefined,
          S3_BUCKET: bucket,
          S3_ENDPOINT: endpoint,
          S3_REGION: "us-east-1",
          S3_ACCESS_KEY_ID: credentials.accessKeyId,
          S3_SECRET_ACCESS_KEY: credentials.secretAccessKey,
        },
      });
      const other = { ...second, databaseUrl, redisPrefix };
      const owner = await createTenant(other);
      const client = apiClient(second.baseUrl, owner.token);
      const created = await createArticle(client, articleBody(owner.projectId, { target_word_count: 700, image_count: 2, image_aspect_ratio: "9:16" }));
      const done = await waitForArticle(client, created.external_id, finished, 90_000);
      const served = await expectServedImages(second.baseUrl, done, 2, "9:16");
      expectImagesInContent(done.content, done);

      // The bucket holds each image's bytes, exactly as served.
      const objects = new S3Client({ bucket, endpoint, region: "us-east-1", ...credentials });
      for (const [url, bytes] of served) {
        const key = `article-images/${url.split("/").pop()}`;
        expect(Buffer.from(await objects.file(key).arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
      }
      const listed = await objects.list({ prefix: "article-images/" });
      expect((listed.contents ?? []).map((o) => o.key).sort()).toEqual([...served.keys()].map((u) => `article-images/${u.split("/").pop()}`).sort());
    } finally {
      await second?.stop();
      await dropTestData(databaseUrl, redisPrefix);
      await s3.close();
      rmSync(directory, { recursive: true, force: true });
    }
  }, 120_000);
});
