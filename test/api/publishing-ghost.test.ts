// Publishing to Ghost through the public API, against a faithful fake of Ghost's Admin API
// (test/harness/ghost-admin.ts: no real Ghost can run here). Also where the publishing job's
// retries are shown: a site answering 503, and one answering 429 with Retry-After.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ghostAdminToken, ghostArticleTag } from "../../services/webhook-dispatcher/src/publishing/ghost.ts";
import { createArticle } from "../harness/articles.ts";
import { startFakeGhost, type FakeGhost, type GhostPost } from "../harness/ghost-admin.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { articleBody, waitForArticle } from "./generation-support.ts";

let stack: TestStack;
let tenant: Tenant;
let api: ApiClient;
let ghost: FakeGhost;
let destinationId: number;

beforeAll(async () => {
  stack = await useStack();
  ghost = startFakeGhost();
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
  const created = await api.post(`/v1/projects/${tenant.projectId}/destinations`, {
    kind: "ghost",
    name: "Ghost blog",
    site_url: ghost.url,
    admin_api_key: ghost.adminApiKey,
    default_status: "published",
    default_tags: ["coffee"],
  });
  expect(created.status).toBe(201);
  destinationId = created.body.data.id;
});

afterAll(() => ghost?.stop());

/** The site's posts that carry the article's private tag, read through the Admin API as an editor's tool would. */
async function postsOf(externalId: string): Promise<GhostPost[]> {
  const slug = `hash-article-service-${externalId}`;
  const response = await fetch(`${ghost.url}/ghost/api/admin/posts/?filter=tag:${slug}`, { headers: { authorization: `Ghost ${ghostAdminToken(ghost.adminApiKey)}` } });
  expect(response.status).toBe(200);
  return ((await response.json()) as { posts: GhostPost[] }).posts;
}

const publicationTo = (article: any) => article.publications.find((p: any) => p.destination_id === destinationId);
const finishedArticle = (body: Record<string, unknown>) => createArticle(api, articleBody(tenant.projectId, body)).then((a) => waitForArticle(api, a.external_id, (x) => x.status === "completed" && x.ai_detection_score !== null, 60_000));
/** Waits for the publication asked for after `since` (ISO) to reach `state`. */
const publicationAfter = (id: number, since: string, state: string) => waitForArticle(api, id, (a) => publicationTo(a)?.state === state && publicationTo(a).requested_at > since, 60_000);

describe("Ghost destinations", () => {
  test("the connection check takes the Admin API key; a wrong key is named", async () => {
    const check = await api.post(`/v1/projects/${tenant.projectId}/destinations/${destinationId}/check`, {});
    expect(check.body.data).toMatchObject({ ok: true, problems: [], user_name: "Fake Ghost", can_create_posts: true });
    const wrongKey = `${ghost.adminApiKey.split(":")[0]}:${"ab".repeat(32)}`;
    const wrong = await api.post(`/v1/projects/${tenant.projectId}/destinations`, { kind: "ghost", name: "Wrong key", site_url: ghost.url, admin_api_key: wrongKey });
    const failed = await api.post(`/v1/projects/${tenant.projectId}/destinations/${wrong.body.data.id}/check`, {});
    expect(failed.body.data).toMatchObject({ ok: false, problems: ["Ghost rejected the Admin API key."] });
  });

  test("an article is posted as HTML with its image uploaded as feature image, its tags and a private tag; no newsletter is asked for", async () => {
    const created = await createArticle(api, articleBody(tenant.projectId, { title: "Milk frothing basics", image_count: 1, publish: { destination_id: destinationId, tags: ["milk"] } }));
    const article = await waitForArticle(api, created.external_id, (a) => publicationTo(a)?.state === "published", 90_000);
    const [post, ...more] = await postsOf(article.external_id);
    expect(more).toHaveLength(0);
    expect(publicationTo(article)).toMatchObject({ destination_kind: "ghost", remote_id: post!.id, remote_url: post!.url, remote_status: "published" });
    expect(post!.status).toBe("published");
    expect(post!.custom_excerpt).toBe(article.description);
    expect(post!.tags.map((t) => [t.name, t.visibility])).toEqual([
      ["milk", "public"],
      [ghostArticleTag(article.external_id), "internal"],
    ]);
    const [stored] = [...ghost.images.entries()].filter(([, image]) => image.ref === article.images[0].url);
    expect(post!.feature_image).toBe(stored![0]);
    expect(post!.feature_image_alt).toBe(article.images[0].alt);
    expect(post!.html).toContain(stored![0]);
    expect(post!.html).not.toContain(article.images[0].url);
    expect(post!.html).toContain("<h2");
    expect(ghost.requests.filter((r) => r.includes("newsletter"))).toEqual([]);

    const since = new Date().toISOString();
    expect((await api.post(`/v1/articles/${article.id}/publish`, { destination_id: destinationId, status: "draft" })).status).toBe(202);
    const again = await publicationAfter(article.id, since, "published");
    expect(publicationTo(again)).toMatchObject({ remote_id: post!.id, remote_status: "draft" });
    expect((await postsOf(article.external_id)).map((p) => p.status)).toEqual(["draft"]);
  });

  test("a site answering 503 is tried again, each attempt recorded, until it takes the post", async () => {
    const article = await finishedArticle({ title: "Decaf without regret" });
    ghost.failNext(2, 503);
    const since = new Date().toISOString();
    expect((await api.post(`/v1/articles/${article.id}/publish`, { destination_id: destinationId })).status).toBe(202);
    const done = await publicationAfter(article.id, since, "published");
    expect(publicationTo(done).attempts.map((a: any) => [a.outcome, a.status_code])).toEqual([
      ["retry", 503],
      ["retry", 503],
      ["published", null],
    ]);
    expect(await postsOf(article.external_id)).toHaveLength(1);
  });

  test("a 429's Retry-After is waited out before the next attempt", async () => {
    const article = await finishedArticle({ title: "Cold brew ratios" });
    ghost.failNext(1, 429, 2);
    const since = new Date().toISOString();
    expect((await api.post(`/v1/articles/${article.id}/publish`, { destination_id: destinationId })).status).toBe(202);
    const done = await publicationAfter(article.id, since, "published");
    const [first, second] = publicationTo(done).attempts;
    expect([first.outcome, first.status_code, second.outcome]).toEqual(["retry", 429, "published"]);
    // The tests' backoff is 300 ms; the site asked for 2 s.
    expect(Date.parse(second.attempted_at) - Date.parse(first.attempted_at)).toBeGreaterThanOrEqual(2000);
  });

  test("a scheduled post needs a future publish_at; a category is refused for Ghost", async () => {
    const article = await finishedArticle({ title: "Tamping pressure" });
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
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const since = new Date().toISOString();
    expect((await api.post(`/v1/articles/${article.id}/publish`, { destination_id: destinationId, publish_at: at })).status).toBe(202);
    const scheduled = await publicationAfter(article.id, since, "published");
    expect(publicationTo(scheduled).remote_status).toBe("scheduled");
    expect(Date.parse((await postsOf(article.external_id))[0]!.published_at!)).toBe(Date.parse(at));
  });
});
