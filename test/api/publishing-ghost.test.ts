// Publishing to a real Ghost 5 (npm's `ghost`, on Node and a MariaDB database of its own; see
// test/harness/ghost.ts) through the public API: the key checked, a post with its HTML,
// feature image, tags and excerpt, a re-publish, a scheduled post, an answer lost after Ghost made
// the post, deleting an article with its post (unpublish=true), and markup in model output. What
// landed is read back through Ghost's Admin API, as an editor's tool would, and from the post's
// public page. The faults a real Ghost cannot be made to produce on demand (503, 429 with
// Retry-After) are in publishing-ghost-faults.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { ghostAdminToken, ghostArticleTag } from "../../services/webhook-dispatcher/src/publishing/ghost.ts";
import { createArticle } from "../harness/articles.ts";
import { startGhost, type GhostSite } from "../harness/ghost.ts";
import type { GhostPost } from "../harness/ghost-admin.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { liveMarkup } from "../harness/live-markup.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { articleBody, waitForArticle } from "./generation-support.ts";
import { createHostileArticle, HOSTILE_DESCRIPTION } from "./hostile-model-output.ts";

let stack: TestStack;
let tenant: Tenant;
let api: ApiClient;
let ghost: GhostSite;
let destinationId: number;

/** A post as the Admin API answers with include=email,newsletter (both null unless a newsletter was sent). */
type StoredPost = GhostPost & { email: unknown; newsletter: unknown };

const destinationBody = (siteUrl: string, extra: Record<string, unknown> = {}) => ({
  kind: "ghost",
  name: "Ghost blog",
  site_url: siteUrl,
  admin_api_key: ghost.adminApiKey,
  default_status: "published",
  default_tags: ["coffee"],
  ...extra,
});

beforeAll(async () => {
  [stack, ghost] = await Promise.all([useStack(), startGhost()]);
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
  const created = await api.post(`/v1/projects/${tenant.projectId}/destinations`, destinationBody(ghost.url));
  expect(created.status).toBe(201);
  destinationId = created.body.data.id;
}, 180_000);

afterAll(async () => {
  await ghost?.stop();
});

/** The site's posts (any status) that carry the article's private tag, read through the Admin API. */
async function postsOf(externalId: string): Promise<StoredPost[]> {
  const filter = encodeURIComponent(`tag:hash-article-service-${externalId}`);
  const response = await fetch(`${ghost.url}/ghost/api/admin/posts/?filter=${filter}&include=tags,email,newsletter&formats=html&limit=all`, {
    headers: { authorization: `Ghost ${ghostAdminToken(ghost.adminApiKey)}`, "accept-version": "v5.0" },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { posts: StoredPost[] }).posts;
}

const bytesOf = async (url: string) => {
  const response = await fetch(url);
  expect(response.status).toBe(200);
  return new Uint8Array(await response.arrayBuffer());
};

const publicationTo = (article: any, id = destinationId) => article.publications.find((p: any) => p.destination_id === id);
const publicationIs = (state: string, id = destinationId) => (article: any) => publicationTo(article, id)?.state === state;
const finishedArticle = (title: string) =>
  createArticle(api, articleBody(tenant.projectId, { title })).then((a) => waitForArticle(api, a.external_id, (x) => x.status === "completed" && x.ai_detection_score !== null, 60_000));
/** Waits for the publication asked for after `since` (ISO) to reach `state`. */
const publicationAfter = (id: number, since: string, state: string, destination = destinationId) =>
  waitForArticle(api, id, (a) => publicationTo(a, destination)?.state === state && publicationTo(a, destination).requested_at > since, 60_000);

describe("a real Ghost", () => {
  test("the connection check takes the integration's Admin API key and names the site", async () => {
    const check = await api.post(`/v1/projects/${tenant.projectId}/destinations/${destinationId}/check`, {});
    expect(check.status).toBe(200);
    expect(check.body.data).toMatchObject({ ok: true, problems: [], user_name: "Publishing tests", can_create_posts: true });
    expect(JSON.stringify(check.body)).not.toContain(ghost.adminApiKey.split(":")[1]);
  });

  test("a key Ghost refuses is 422 on admin_api_key when the destination is added: nothing added, the key never echoed", async () => {
    const before = (await api.get(`/v1/projects/${tenant.projectId}/destinations`)).body.data.length;
    const [keyId] = ghost.adminApiKey.split(":");
    const wrongSecret = "ab".repeat(32);
    const refused = await api.post(`/v1/projects/${tenant.projectId}/destinations`, destinationBody(ghost.url, { name: "Wrong key", admin_api_key: `${keyId}:${wrongSecret}` }));
    expect(refused.status).toBe(422);
    expect(Object.keys(refused.body.errors)).toEqual(["admin_api_key"]);
    expect(refused.body.errors.admin_api_key.join(" ")).toContain("Ghost rejected the Admin API key");
    expect(JSON.stringify(refused.body)).not.toContain(wrongSecret);
    expect((await api.get(`/v1/projects/${tenant.projectId}/destinations`)).body.data).toHaveLength(before);
  });

  test("an article is posted as HTML with its image uploaded as feature image, its tags, a private tag and its excerpt, no newsletter; published again, the same post is updated", async () => {
    const created = await createArticle(api, articleBody(tenant.projectId, { title: "Milk frothing basics", image_count: 1, publish: { destination_id: destinationId, tags: ["milk"] } }));
    const article = await waitForArticle(api, created.external_id, publicationIs("published"), 90_000);
    const [post, ...more] = await postsOf(article.external_id);
    expect(more).toHaveLength(0);
    expect(publicationTo(article)).toMatchObject({ destination_kind: "ghost", remote_id: post!.id, remote_url: post!.url, remote_status: "published" });
    expect(post!.status).toBe("published");
    expect(post!.custom_excerpt).toBe(article.description);
    expect(post!.tags.map((t) => [t.name, t.visibility])).toEqual([
      ["milk", "public"],
      [ghostArticleTag(article.external_id), "internal"],
    ]);
    // Uploaded to Ghost, not hotlinked: the feature image and the body's image are Ghost's copy of the article's image.
    expect(post!.feature_image).toStartWith(`${ghost.url}/content/images/`);
    // Ghost serves an optimised copy and keeps the file it was given beside it as <name>_o.<ext>.
    const original = post!.feature_image!.replace(/(\.\w+)$/, "_o$1");
    expect(await bytesOf(original)).toEqual(await bytesOf(article.images[0].url));
    expect(post!.feature_image_alt).toBe(article.images[0].alt);
    expect(post!.html).toContain(post!.feature_image!);
    expect(post!.html).not.toContain(article.images[0].url);
    expect(post!.html).toContain("<h2");
    expect([post!.email, post!.newsletter]).toEqual([null, null]);

    const since = new Date().toISOString();
    expect((await api.post(`/v1/articles/${article.id}/publish`, { destination_id: destinationId, status: "draft" })).status).toBe(202);
    const again = await publicationAfter(article.id, since, "published");
    expect(publicationTo(again)).toMatchObject({ remote_id: post!.id, remote_status: "draft" });
    expect((await postsOf(article.external_id)).map((p) => [p.id, p.status])).toEqual([[post!.id, "draft"]]);
  }, 120_000);

  test("a scheduled post goes live at publish_at; a schedule in the past or a category is refused before Ghost is asked", async () => {
    const article = await finishedArticle("Tamping pressure");
    const refusals = await Promise.all([
      api.post(`/v1/articles/${article.id}/publish`, { destination_id: destinationId, status: "scheduled" }),
      api.post(`/v1/articles/${article.id}/publish`, { destination_id: destinationId, categories: ["Guides"] }),
      api.post(`/v1/articles/${article.id}/publish`, { destination_id: destinationId, status: "publish" }),
    ]);
    expect(refusals.map((r) => [r.status, Object.keys(r.body.errors ?? {})])).toEqual([
      [422, ["publish_at"]],
      [422, ["categories"]],
      [422, ["status"]],
    ]);
    const at = new Date(Date.now() + 3_600_000);
    at.setMilliseconds(0); // Ghost keeps whole seconds
    const since = new Date().toISOString();
    expect((await api.post(`/v1/articles/${article.id}/publish`, { destination_id: destinationId, publish_at: at.toISOString() })).status).toBe(202);
    const scheduled = await publicationAfter(article.id, since, "published");
    expect(publicationTo(scheduled).remote_status).toBe("scheduled");
    const [post] = await postsOf(article.external_id);
    expect([post!.status, Date.parse(post!.published_at!)]).toEqual(["scheduled", at.getTime()]);
  });

  test("an answer lost after Ghost made the post: the retry finds that post and updates it, never a second one", async () => {
    // A proxy in front of Ghost drops the connection instead of passing on Ghost's answer to the
    // first post it creates: the post exists, the dispatcher never heard so.
    const proxy = await startAnswerDroppingProxy(ghost.url, (request, status) => request.method === "POST" && /\/ghost\/api\/admin\/posts\/(\?|$)/.test(request.url!) && status === 201);
    try {
      const viaProxy = await api.post(`/v1/projects/${tenant.projectId}/destinations`, destinationBody(proxy.url, { name: "Behind a proxy" }));
      expect(viaProxy.status).toBe(201);
      const proxiedId = viaProxy.body.data.id;
      const article = await finishedArticle("Dialling in a new bag of beans");
      const since = new Date().toISOString();
      expect((await api.post(`/v1/articles/${article.id}/publish`, { destination_id: proxiedId })).status).toBe(202);
      const published = await publicationAfter(article.id, since, "published", proxiedId);
      expect(proxy.dropped()).toBe(1);
      const posts = await postsOf(article.external_id);
      expect(posts).toHaveLength(1);
      expect(publicationTo(published, proxiedId).remote_id).toBe(posts[0]!.id);
      expect(publicationTo(published, proxiedId).attempts.map((a: any) => a.outcome)).toEqual(["retry", "published"]);
    } finally {
      await proxy.stop();
    }
  }, 90_000);

  test("deleting the article with unpublish=true deletes its Ghost post through the Admin API", async () => {
    const article = await finishedArticle("Descaling a machine");
    const since = new Date().toISOString();
    expect((await api.post(`/v1/articles/${article.id}/publish`, { destination_id: destinationId, status: "draft" })).status).toBe(202);
    await publicationAfter(article.id, since, "published");
    expect(await postsOf(article.external_id)).toHaveLength(1);
    expect((await api.delete(`/v1/articles/${article.external_id}?unpublish=true`)).status).toBe(200);
    expect(await postsOf(article.external_id)).toHaveLength(0);
  });
});

describe("markup in model output", () => {
  test("reaches the Ghost post inert: stored HTML, title, excerpt, alt text, tags and slug, and the public page, without a script, a handler or a javascript: link that runs; the text kept as text", async () => {
    const created = await createHostileArticle(api, tenant.projectId, destinationId, "published");
    const article = await waitForArticle(api, created.external_id, publicationIs("published"), 90_000);
    expect(article.description).toBe(HOSTILE_DESCRIPTION);
    const [post] = await postsOf(article.external_id);
    expect(post).toBeDefined();

    // Ghost's html is markup: nothing in it may run. Its title, excerpt, alt text and tag names are
    // plain text, which Ghost escapes wherever it shows them: they keep what the reader should see,
    // and the post's public page, where Ghost's theme shows them all, runs none of it.
    expect(await liveMarkup(post!.html)).toEqual([]);
    const page = await fetch(post!.url);
    expect(page.status).toBe(200);
    const shown = await page.text();
    expect(shown).toContain("&lt;script&gt;alert(&quot;title&quot;)");
    expect(await liveMarkup(shown)).toEqual([]);
    expect(post!.slug).toMatch(/^[a-z0-9-]+$/);

    // The text is all there, as text a reader sees: the heading's escaped script as written, in the title and the body.
    expect(post!.title).toContain(`Brewing <script>alert("title")</script>`);
    expect(post!.html).toContain(`&lt;script&gt;alert("escaped")&lt;/script&gt;`);
    expect(post!.custom_excerpt).toContain(`<script>alert("x")</script>`);
    expect(post!.feature_image_alt).toBe(article.images[0].alt);
    expect(post!.tags.map((t) => t.name)).toContain(`<script>alert("tag")</script>roast`);
  }, 120_000);
});

interface AnswerDroppingProxy {
  url: string;
  /** How many answers it dropped. */
  dropped(): number;
  stop(): Promise<void>;
}

/** A proxy to `target` that closes the connection instead of answering, once, when `drops` says so of a request and Ghost's status. */
async function startAnswerDroppingProxy(target: string, drops: (request: IncomingMessage, status: number) => boolean): Promise<AnswerDroppingProxy> {
  let dropped = 0;
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(request.headers)) if (name !== "host" && typeof value === "string") headers.set(name, value);
    const answer = await fetch(new URL(request.url!, target), { method: request.method, headers, body: chunks.length ? Buffer.concat(chunks) : undefined, redirect: "manual" });
    const body = Buffer.from(await answer.arrayBuffer());
    if (dropped === 0 && drops(request, answer.status)) {
      dropped++;
      request.socket.destroy();
      return;
    }
    const passed: Record<string, string> = {};
    answer.headers.forEach((value, name) => {
      if (!["content-encoding", "content-length", "transfer-encoding", "connection", "keep-alive"].includes(name)) passed[name] = value;
    });
    response.writeHead(answer.status, passed).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    dropped: () => dropped,
    stop: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
