// Publishing to a real WordPress (Debian's, served by php -S on a MariaDB database of its own)
// through the public API: destinations under a project, checked against the site when added (a
// refused credential, a site that cannot be reached, a REST root on another origin), an article
// created with `publish`, a re-publish, racing publish requests, revoked credentials, deleting an
// article with and without its post (unpublish=true), and model output full of markup reaching the
// post inert. What landed is checked through WordPress's own REST API, as the site's
// administrator would look at it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Queue } from "bullmq";
import { parseHTML } from "linkedom";
import postgres from "postgres";
import { publishingJobId, type PublishingJob } from "../../services/kit/src/queues.ts";
import { queuePrefix } from "../../services/kit/src/redis.ts";
import { articleMarker } from "../../services/webhook-dispatcher/src/publishing/wordpress.ts";
import { createArticle } from "../harness/articles.ts";
import { eventually } from "../harness/eventually.ts";
import { freePort } from "../harness/ports.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { startWordPress, type WordPressSite } from "../harness/wordpress.ts";
import { articleBody, waitForArticle } from "./generation-support.ts";
import { createHostileArticle, HOSTILE_DESCRIPTION } from "./hostile-model-output.ts";

let stack: TestStack;
let tenant: Tenant;
let api: ApiClient;
let site: WordPressSite;
let destinationId: number;

const destinationBody = (s: WordPressSite, extra: Record<string, unknown> = {}) => ({
  kind: "wordpress",
  name: "Coffee blog",
  site_url: s.url,
  username: s.username,
  application_password: s.applicationPassword,
  default_categories: ["Guides"],
  default_tags: ["coffee"],
  ...extra,
});

beforeAll(async () => {
  [stack, site] = await Promise.all([useStack(), startWordPress()]);
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
  const created = await api.post(`/v1/projects/${tenant.projectId}/destinations`, destinationBody(site));
  expect(created.status).toBe(201);
  destinationId = created.body.data.id;
}, 90_000);

afterAll(async () => {
  await site?.stop();
});

/** A route of WordPress's own REST API, under the root the site announced. */
function restUrl(route: string): URL {
  const url = new URL(site.restRoot);
  if (url.searchParams.has("rest_route")) url.searchParams.set("rest_route", `/${route}`);
  else url.pathname += route;
  return url;
}
const asAdmin = () => ({ authorization: `Basic ${btoa(`${site.username}:${site.applicationPassword}`)}` });

/** A read through WordPress's own REST API, as the site's administrator. */
async function wp(route: string, query: Record<string, string | number> = {}): Promise<any> {
  const url = restUrl(route);
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, String(v));
  const response = await fetch(url, { headers: asAdmin() });
  expect(response.status).toBe(200);
  return response.json();
}

/** A change through WordPress's own REST API, as the site's administrator. */
async function wpAdmin(method: "POST" | "DELETE", route: string, body?: unknown): Promise<any> {
  const response = await fetch(restUrl(route), { method, headers: { ...asAdmin(), "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  expect(response.status).toBeLessThan(300);
  return response.json();
}

/** The posts (any status but trash) that carry the article's marker. */
const postsOf = async (externalId: string) => (await wp("wp/v2/posts", { status: "any", context: "edit", per_page: 100 })).filter((p: any) => p.content.raw.includes(articleMarker(externalId)));

const publicationTo = (article: any, id = destinationId) => article.publications.find((p: any) => p.destination_id === id);
const publicationIs = (state: string, id = destinationId) => (article: any) => publicationTo(article, id)?.state === state;

describe("destinations", () => {
  test("created, listed and read without their credential, which is stored encrypted; the connection check names the user", async () => {
    const list = await api.get(`/v1/projects/${tenant.projectId}/destinations`);
    expect(list.status).toBe(200);
    const [listed] = list.body.data;
    expect(listed).toMatchObject({ id: destinationId, kind: "wordpress", name: "Coffee blog", site_url: site.url, username: site.username, default_status: "draft", default_categories: ["Guides"], default_tags: ["coffee"] });
    expect(JSON.stringify(list.body)).not.toContain(site.applicationPassword);
    expect(Object.keys(listed)).not.toContain("application_password");

    const sql = postgres(stack.env.DATABASE_URL!, { max: 1 });
    try {
      const [row] = await sql`select * from webhook_dispatcher.destinations where id = ${destinationId}`;
      expect(JSON.stringify(row)).not.toContain(site.applicationPassword);
      expect(JSON.stringify(row)).not.toContain(site.applicationPassword.replace(/\s+/g, ""));
    } finally {
      await sql.end();
    }

    const check = await api.post(`/v1/projects/${tenant.projectId}/destinations/${destinationId}/check`, {});
    expect(check.status).toBe(200);
    expect(check.body.data).toMatchObject({ ok: true, problems: [], user_name: expect.any(String), can_create_posts: true, can_publish_posts: true, can_upload_media: true });
  });

  test("added with credentials the site accepts, with no warning", async () => {
    const created = await api.post(`/v1/projects/${tenant.projectId}/destinations`, destinationBody(site, { name: "Checked on adding" }));
    expect(created.status).toBe(201);
    expect(created.body.warnings).toEqual([]);
    expect(JSON.stringify(created.body)).not.toContain(site.applicationPassword);
  });

  test("a wrong application password or an unknown user is refused when the destination is added: 422 on application_password, nothing added, the password never echoed", async () => {
    const before = (await api.get(`/v1/projects/${tenant.projectId}/destinations`)).body.data.length;
    const password = "aaaa bbbb cccc dddd eeee ffff";
    const wrong = await api.post(`/v1/projects/${tenant.projectId}/destinations`, destinationBody(site, { name: "Wrong password", application_password: password }));
    expect(wrong.status).toBe(422);
    expect(wrong.body).toMatchObject({ errors: { application_password: [expect.stringContaining("rejected the username or application password")] } });
    expect(Object.keys(wrong.body.errors)).toEqual(["application_password"]);
    const stranger = await api.post(`/v1/projects/${tenant.projectId}/destinations`, destinationBody(site, { name: "Unknown user", username: "nobody-here" }));
    expect(stranger.status).toBe(422);
    // WordPress answers an unknown login as it answers a wrong password.
    expect(stranger.body.errors).toEqual({ application_password: [expect.stringContaining("username or application password")] });
    for (const answer of [wrong, stranger]) {
      expect(JSON.stringify(answer.body)).not.toContain(password);
      expect(JSON.stringify(answer.body)).not.toContain(site.applicationPassword);
    }
    expect((await api.get(`/v1/projects/${tenant.projectId}/destinations`)).body.data).toHaveLength(before);
  });

  test("a site that cannot be reached is still added, with a warning saying so", async () => {
    const deadSite = `http://127.0.0.1:${await freePort()}`;
    const offline = await api.post(`/v1/projects/${tenant.projectId}/destinations`, destinationBody(site, { name: "Offline for now", site_url: deadSite }));
    expect(offline.status).toBe(201);
    expect(offline.body.data).toMatchObject({ name: "Offline for now", site_url: deadSite });
    expect(offline.body.warnings).toEqual([expect.stringContaining("could not be reached")]);
    expect(JSON.stringify(offline.body)).not.toContain(site.applicationPassword);
  });

  test("a REST API announced on another origin is refused on site_url, and that origin never gets the credential", async () => {
    // The site's home page names a REST root elsewhere (as an injected Link header would).
    const elsewhere: string[] = [];
    const foreign = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (request) => (elsewhere.push(`${request.method} ${request.headers.get("authorization") ?? "-"}`), Response.json({})) });
    const front = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(request) {
        const url = new URL(request.url);
        const forwarded = new Headers(request.headers);
        forwarded.delete("host");
        const answer = await fetch(new URL(url.pathname + url.search, site.url), { method: request.method, headers: forwarded, redirect: "manual" });
        const headers = new Headers(answer.headers);
        headers.set("link", `<http://localhost:${foreign.port}/wp-json/>; rel="https://api.w.org/"`);
        headers.delete("content-encoding");
        headers.delete("content-length");
        return new Response(await answer.arrayBuffer(), { status: answer.status, headers });
      },
    });
    try {
      const refused = await api.post(`/v1/projects/${tenant.projectId}/destinations`, destinationBody(site, { name: "Elsewhere", site_url: `http://127.0.0.1:${front.port}` }));
      expect(refused.status).toBe(422);
      expect(Object.keys(refused.body.errors)).toEqual(["site_url"]);
      expect(refused.body.errors.site_url[0]).toContain(`http://localhost:${foreign.port}`);
      expect(elsewhere).toEqual([]);
    } finally {
      front.stop(true);
      foreign.stop(true);
    }
  });

  test("bad input is a 422 naming each field; another project's destination is 404", async () => {
    const bad = await api.post(`/v1/projects/${tenant.projectId}/destinations`, { kind: "wordpress", name: "", site_url: "ftp://example.com", username: "x", application_password: "p", default_status: "live" });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors).sort()).toEqual(["default_status", "name", "site_url"]);
    const ghostKey = await api.post(`/v1/projects/${tenant.projectId}/destinations`, { kind: "ghost", name: "Ghost", site_url: "https://ghost.example", admin_api_key: "not-a-key" });
    expect(ghostKey.status).toBe(422);
    expect(Object.keys(ghostKey.body.errors)).toEqual(["admin_api_key"]);

    const other = await createTenant(stack);
    const otherApi = apiClient(stack.baseUrl, other.token);
    expect((await otherApi.get(`/v1/projects/${tenant.projectId}/destinations/${destinationId}`)).status).toBe(404);
    expect((await otherApi.get(`/v1/projects/${other.projectId}/destinations/${destinationId}`)).status).toBe(404);
  });
});

describe("publishing an article", () => {
  let article: any;

  test("created with publish: posted when it completes, with its images in the media library, the first as featured image, terms, excerpt and slug", async () => {
    const created = await createArticle(
      api,
      articleBody(tenant.projectId, { title: "Espresso at home", target_word_count: 300, image_count: 2, publish: { destination_id: destinationId, status: "publish", tags: ["espresso"], slug: "espresso-at-home" } }),
    );
    article = await waitForArticle(api, created.external_id, publicationIs("published"), 120_000);
    const publication = publicationTo(article);
    expect(article.status).toBe("published"); // no webhook: the publication is the handover
    expect(publication).toMatchObject({ destination_kind: "wordpress", remote_status: "publish", version_id: article.current_version_id, error: null });
    expect(publication.attempts.map((a: any) => a.outcome)).toEqual(["published"]);

    const [post, ...more] = await postsOf(article.external_id);
    expect(more).toHaveLength(0);
    expect(String(post.id)).toBe(publication.remote_id);
    expect(post.link).toBe(publication.remote_url);
    expect(post.status).toBe("publish");
    expect(post.slug).toBe("espresso-at-home");
    expect(post.excerpt.raw).toBe(article.description);
    const [categories, tags] = await Promise.all([wp("wp/v2/categories", { include: post.categories.join(",") }), wp("wp/v2/tags", { include: post.tags.join(",") })]);
    expect(categories.map((c: any) => c.name)).toEqual(["Guides"]);
    expect(tags.map((t: any) => t.name)).toEqual(["espresso"]);

    // Uploaded, not hotlinked: the body shows the library's copies, and none of this service's URLs.
    const media = await wp("wp/v2/media", { parent: post.id, context: "edit" });
    expect(media).toHaveLength(2);
    expect(media.map((m: any) => m.alt_text).sort()).toEqual(article.images.map((i: any) => i.alt).sort());
    expect(post.featured_media).toBe(media.find((m: any) => m.alt_text === article.images[0].alt).id);
    for (const image of article.images) expect(post.content.raw).not.toContain(image.url);
    for (const m of media) expect(post.content.raw).toContain(m.source_url);
    expect(post.content.raw).toContain("<h2");
    expect(post.content.raw).not.toMatch(/^#+ /m); // HTML, not markdown
  });

  test("publishing again updates the same post, never a second one, and records the new attempt", async () => {
    expect(article).toBeDefined();
    const again = await api.post(`/v1/articles/${article.id}/publish`, { destination_id: destinationId, status: "draft" });
    expect(again.status).toBe(202);
    expect(publicationTo(again.body.data).state).toBe("queued");
    const republished = await waitForArticle(api, article.id, (a) => publicationIs("published")(a) && publicationTo(a).remote_status === "draft", 60_000);
    expect(publicationTo(republished).remote_id).toBe(publicationTo(article).remote_id);
    const posts = await postsOf(article.external_id);
    expect(posts).toHaveLength(1);
    expect(posts[0].status).toBe("draft");
  });

  test("publish requests racing for one article make one post", async () => {
    const created = await createArticle(api, articleBody(tenant.projectId, { title: "Grinding for pour-over" }));
    const done = await waitForArticle(api, created.external_id, (a) => a.status === "completed" && a.ai_detection_score !== null, 60_000);
    const answers = await Promise.all(Array.from({ length: 4 }, () => api.post(`/v1/articles/${done.id}/publish`, { destination_id: destinationId })));
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 202]);
    // And the same job twice more, as a queue would hand out a job retried after the site accepted it.
    const queue = new Queue<PublishingJob>("publishing", { connection: { url: stack.env.REDIS_URL }, prefix: queuePrefix(stack.env.REDIS_PREFIX!, false) });
    try {
      const job: PublishingJob = { externalId: done.external_id, projectId: tenant.projectId, destinationId, options: { status: null, publishAt: null, categories: null, tags: null, slug: null }, requestedAt: new Date().toISOString() };
      await Promise.all([queue.add("publish", job, { jobId: publishingJobId(job) }), queue.add("publish", job, { jobId: `${publishingJobId(job)}-copy` })]);
      await waitForArticle(api, done.id, (a) => publicationIs("published")(a) && publicationTo(a).requested_at === job.requestedAt, 60_000);
    } finally {
      await queue.close();
    }
    expect(await postsOf(done.external_id)).toHaveLength(1);
  });

  test("a publish job killed after WordPress took the post runs again and updates that post, never a second one", async () => {
    // A proxy in front of the site kills the dispatcher the moment WordPress has created the post,
    // before the answer reaches it: the post exists, the article does not know it.
    let killed: Promise<void> | undefined;
    const proxy = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(request) {
        const url = new URL(request.url);
        const target = new URL(url.pathname + url.search, site.url);
        const creates = request.method === "POST" && (url.searchParams.get("rest_route") ?? url.pathname).replace(/\/$/, "").endsWith("wp/v2/posts");
        const forwarded = new Headers(request.headers);
        forwarded.delete("host");
        const answer = await fetch(target, { method: request.method, headers: forwarded, body: request.body ? await request.arrayBuffer() : undefined, redirect: "manual" });
        const headers = new Headers(answer.headers);
        // The site announces its REST root at its own address: keep the dispatcher on the proxy.
        const link = headers.get("link");
        if (link) headers.set("link", link.split(site.url).join(`http://127.0.0.1:${proxy.port}`));
        headers.delete("content-encoding");
        headers.delete("content-length");
        const body = await answer.arrayBuffer();
        if (creates && answer.status === 201 && !killed) {
          killed = stack.kill("webhookDispatcher");
          await killed;
        }
        return new Response(body, { status: answer.status, headers });
      },
    });
    try {
      const viaProxy = await api.post(`/v1/projects/${tenant.projectId}/destinations`, destinationBody(site, { name: "Behind a proxy", site_url: `http://127.0.0.1:${proxy.port}` }));
      const proxiedId = viaProxy.body.data.id;
      const created = await createArticle(api, articleBody(tenant.projectId, { title: "Dialling in a new bag of beans" }));
      const done = await waitForArticle(api, created.external_id, (a) => a.status === "completed" && a.ai_detection_score !== null, 60_000);
      expect((await api.post(`/v1/articles/${done.id}/publish`, { destination_id: proxiedId })).status).toBe(202);
      await eventually(async () => killed !== undefined, (started) => started, 30_000, "the dispatcher killed as WordPress created the post");
      await killed;
      await stack.start("webhookDispatcher");
      // BullMQ hands the dead worker's job out again once its lock lapses (DISPATCHER_LOCK_MS, 5 s in the test stack).
      const published = await waitForArticle(api, done.id, publicationIs("published", proxiedId), 90_000);
      const posts = await postsOf(done.external_id);
      expect(posts).toHaveLength(1);
      expect(publicationTo(published, proxiedId).remote_id).toBe(String(posts[0].id));
    } finally {
      proxy.stop(true);
    }
  }, 150_000);

  test("credentials revoked after the destination was added end in a recorded failure and a publication event, the article's content and status untouched", async () => {
    // An application password of its own, accepted when the destination is added, then revoked on the site.
    const issued = await wpAdmin("POST", "wp/v2/users/me/application-passwords", { name: "revoked later" });
    const wrong = await api.post(`/v1/projects/${tenant.projectId}/destinations`, destinationBody(site, { name: "Revoked", application_password: issued.password }));
    expect(wrong.status).toBe(201);
    await wpAdmin("DELETE", `wp/v2/users/me/application-passwords/${issued.uuid}`);
    const wrongId = wrong.body.data.id;
    const created = await createArticle(api, articleBody(tenant.projectId, { title: "Cleaning a burr grinder" }));
    const done = await waitForArticle(api, created.external_id, (a) => a.status === "completed" && a.ai_detection_score !== null, 60_000);
    expect((await api.post(`/v1/articles/${done.id}/publish`, { destination_id: wrongId })).status).toBe(202);
    const failed = await waitForArticle(api, done.id, publicationIs("failed", wrongId), 60_000);
    const publication = publicationTo(failed, wrongId);
    expect(publication.error).toContain("rejected the username or application password");
    expect(publication.attempts.map((a: any) => [a.outcome, a.status_code])).toEqual([["failed", 401]]);
    expect(failed.status).toBe("completed");
    expect(failed.content).toBe(done.content);
    expect(failed.current_version_id).toBe(done.current_version_id);
    expect(await postsOf(done.external_id)).toHaveLength(0);

    // The run's stream ends at completed; publication events follow it, read by resuming after it.
    const readUntil = async (lastEventId: string, until: string) => {
      const stream = await fetch(`${stack.baseUrl}/v1/articles/${done.id}/events`, { headers: { authorization: `Bearer ${tenant.token}`, "last-event-id": lastEventId } });
      const reader = stream.body!.getReader();
      let text = "";
      while (!text.includes(until)) {
        const { value, done: ended } = await reader.read();
        if (ended) break;
        text += new TextDecoder().decode(value);
      }
      await reader.cancel();
      return text;
    };
    const run = await readUntil("0-0", "event: completed");
    const completedId = /id: (\S+)\nevent: completed/.exec(run)![1]!;
    const text = await readUntil(completedId, '"state":"failed"');
    expect(text).toContain("event: publication");
    expect(text).toContain('"state":"failed"');
  });

  test("a publish request names what is wrong: an unfinished article, a destination of another project, a past schedule", async () => {
    const other = await createTenant(stack);
    const otherApi = apiClient(stack.baseUrl, other.token);
    const foreign = await otherApi.post(`/v1/projects/${other.projectId}/destinations`, destinationBody(site));
    const created = await createArticle(api, articleBody(tenant.projectId, { title: "Water for coffee" }));
    const done = await waitForArticle(api, created.external_id, (a) => a.status === "completed", 60_000);
    const refusals = await Promise.all([
      api.post(`/v1/articles/${done.id}/publish`, { destination_id: foreign.body.data.id }),
      api.post(`/v1/articles/${done.id}/publish`, { destination_id: destinationId, publish_at: "2001-01-01T00:00:00Z" }),
      api.post(`/v1/articles/${done.id}/publish`, { destination_id: destinationId, slug: "Not A Slug" }),
      api.post(`/v1/articles/${done.id}/publish`, {}),
      api.post("/v1/articles", articleBody(tenant.projectId, { publish: { destination_id: foreign.body.data.id } })),
    ]);
    expect(refusals.map((r) => r.status)).toEqual([422, 422, 422, 422, 422]);
    expect(refusals.map((r) => Object.keys(r.body.errors))).toEqual([["destination_id"], ["publish_at"], ["slug"], ["destination_id"], ["publish.destination_id"]]);
  });

  test("deleting the article with unpublish=true deletes its post on WordPress for good; without it the post stays", async () => {
    expect(article).toBeDefined();
    const [post] = await postsOf(article.external_id);
    expect(post).toBeDefined();
    expect((await api.delete(`/v1/articles/${article.external_id}?unpublish=maybe`)).status).toBe(422);
    const res = await api.delete(`/v1/articles/${article.external_id}?unpublish=true`);
    expect(res.status).toBe(200);
    expect((await api.get(`/v1/articles/${article.external_id}`)).status).toBe(404);
    // Not in the trash either: WordPress answers 404 for the post's id.
    expect(await postsOf(article.external_id)).toHaveLength(0);
    expect((await fetch(restUrl(`wp/v2/posts/${post.id}`), { headers: asAdmin() })).status).toBe(404);

    // An article deleted without it leaves its post where it is.
    const kept = await createArticle(api, articleBody(tenant.projectId, { title: "Cold brew basics", publish: { destination_id: destinationId, status: "draft" } }));
    const published = await waitForArticle(api, kept.external_id, publicationIs("published"), 60_000);
    expect((await api.delete(`/v1/articles/${published.external_id}`)).status).toBe(200);
    expect(await postsOf(published.external_id)).toHaveLength(1);
  });
});

describe("markup in model output", () => {
  /** What would run where this HTML is shown (script elements, on… handlers, javascript: URLs), and any raw "<script" at all. */
  function live(html: string): string[] {
    const { document } = parseHTML(`<!doctype html><html><head></head><body>${html}</body></html>`);
    const found = /<script/i.test(html) ? ["a raw <script"] : [];
    for (const element of document.querySelectorAll("*")) {
      if (element.tagName === "SCRIPT") found.push("a script element");
      for (const { name, value } of element.attributes) {
        if (/^on/i.test(name)) found.push(`an ${name} attribute`);
        if (/^\s*javascript:/i.test(value)) found.push(`a javascript: URL in ${name}`);
      }
    }
    return found;
  }

  test("reaches the post inert: title, body, excerpt, alt text and tags stored without a script, a handler or a javascript: link, the text kept as text", async () => {
    const created = await createHostileArticle(api, tenant.projectId, destinationId, "publish");
    const article = await waitForArticle(api, created.external_id, publicationIs("published"), 120_000);
    expect(article.description).toBe(HOSTILE_DESCRIPTION);

    const [post] = await postsOf(article.external_id);
    expect(post).toBeDefined();
    // Stored (raw, as editors and admins get it) and rendered.
    const fields = { "title.raw": post.title.raw, "title.rendered": post.title.rendered, "content.raw": post.content.raw, "excerpt.raw": post.excerpt.raw, "excerpt.rendered": post.excerpt.rendered };
    const media = await wp("wp/v2/media", { parent: post.id, context: "edit" });
    expect(media).toHaveLength(1);
    const tags = await wp("wp/v2/tags", { include: post.tags.join(","), context: "edit" });
    const stored = { ...fields, alt_text: media[0].alt_text, "media title": media[0].title.raw, tags: tags.map((t: any) => t.name).join(" ") };
    expect(Object.fromEntries(Object.entries(stored).map(([field, html]) => [field, live(String(html))]))).toEqual(Object.fromEntries(Object.keys(stored).map((field) => [field, []])));

    // The text is all there, as text: the escaped script of the heading shows as written.
    expect(post.title.raw).toContain(`Brewing &lt;script&gt;alert("title")&lt;/script&gt;`);
    expect(post.content.raw).toContain(`&lt;script&gt;alert("escaped")&lt;/script&gt;`);
    expect(post.excerpt.raw).toContain(`&lt;script&gt;alert("x")&lt;/script&gt;`);
  }, 150_000);
});
