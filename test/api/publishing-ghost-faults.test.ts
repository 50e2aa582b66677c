// Faults a real Ghost cannot be made to produce on demand, against the fake of Ghost's Admin API
// (test/harness/ghost-admin.ts): a site answering 503 (Ghost does while it migrates or is
// overloaded) is tried again, and a 429's Retry-After is waited out. Everything a real Ghost can
// show is tested against one, in publishing-ghost.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ghostAdminToken } from "../../services/webhook-dispatcher/src/publishing/ghost.ts";
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

describe("a Ghost site in trouble", () => {
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
});
