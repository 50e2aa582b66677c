// Protective headers on every answer of the HTTP API (OWASP REST security): each route family
// (articles, the event stream, workflows, the user, publishing destinations, images, the docs,
// health) and each kind of refusal (401, 404, 422, 429) is asked over real HTTP and must carry
// Cache-Control: no-store where it may hold a tenant's data, X-Content-Type-Options: nosniff and
// Content-Security-Policy: frame-ancestors 'none'; Strict-Transport-Security is sent only when
// the public address is https://.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { createArticle } from "../harness/articles.ts";
import { apiClient } from "../harness/http.ts";
import { startOwnGateway, type OwnGateway } from "../harness/own-gateway.ts";
import { eventually } from "../harness/eventually.ts";
import { articleBody } from "./generation-support.ts";

let stack: TestStack;
let tenant: Tenant;
let articleId: string;
let secure: OwnGateway;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  articleId = (await createArticle(apiClient(stack.baseUrl, tenant.token), articleBody(tenant.projectId))).external_id;
  secure = await startOwnGateway(stack, { PUBLIC_BASE_URL: "https://articles.example.com" });
  // Its /healthz answers 200 once it has seen each of its dependencies answer.
  await eventually(() => fetch(`${secure.baseUrl}/healthz`).then((r) => r.status), (status) => status === 200, 30_000, "the https gateway's dependencies");
}, 60_000);

afterAll(async () => {
  await secure?.stop();
});

/** The headers of an answer (the body is not read past its start: the event stream stays open). */
async function headersOf(baseUrl: string, method: string, path: string, opts: { token?: string; body?: string } = {}) {
  const controller = new AbortController();
  const headers: Record<string, string> = opts.token ? { authorization: `Bearer ${opts.token}` } : {};
  if (opts.body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(baseUrl + path, { method, headers, body: opts.body, signal: controller.signal });
  controller.abort();
  const pick = (name: string) => res.headers.get(name);
  return {
    status: res.status,
    type: (pick("content-type") ?? "").split(";")[0],
    cache: pick("cache-control"),
    nosniff: pick("x-content-type-options"),
    csp: pick("content-security-policy"),
    hsts: pick("strict-transport-security"),
  };
}

/** Every route family and refusal, with the status each answers here. */
const ASKED = (t: Tenant) => [
  { what: "an article", method: "GET", path: `/v1/articles/${articleId}`, token: t.token, status: 200 },
  { what: "the article list", method: "GET", path: `/v1/articles?project_id=${t.projectId}`, token: t.token, status: 200 },
  { what: "an article's steps", method: "GET", path: `/v1/articles/${articleId}/steps`, token: t.token, status: 200 },
  { what: "the event stream", method: "GET", path: `/v1/articles/${articleId}/events`, token: t.token, status: 200 },
  { what: "workflows", method: "GET", path: `/v1/projects/${t.projectId}/workflows`, token: t.token, status: 200 },
  { what: "the user", method: "GET", path: "/user", token: t.token, status: 200 },
  { what: "destinations", method: "GET", path: `/v1/projects/${t.projectId}/destinations`, token: t.token, status: 200 },
  { what: "an image that is not there", method: "GET", path: `/images/${"0".repeat(32)}.png`, status: 404 },
  { what: "the OpenAPI document", method: "GET", path: "/docs/json", status: 200 },
  { what: "health", method: "GET", path: "/healthz", status: 200 },
  { what: "liveness", method: "GET", path: "/livez", status: 200 },
  { what: "readiness", method: "GET", path: "/readyz", status: 200 },
  { what: "no key (401)", method: "GET", path: `/v1/articles/${articleId}`, status: 401 },
  { what: "an unknown article (404)", method: "GET", path: `/v1/articles/${crypto.randomUUID()}`, token: t.token, status: 404 },
  { what: "an unknown route (404)", method: "GET", path: "/v1/nothing-here", token: t.token, status: 404 },
  { what: "invalid input (422)", method: "POST", path: "/v1/articles", token: t.token, body: "{}", status: 422 },
];

describe("every answer carries the protective headers", () => {
  test("each route family and refusal: no-store, nosniff, frame-ancestors 'none', no HSTS over http", async () => {
    const seen: Record<string, unknown> = {};
    const expected: Record<string, unknown> = {};
    for (const asked of ASKED(tenant)) {
      const h = await headersOf(stack.baseUrl, asked.method, asked.path, asked);
      seen[asked.what] = { status: h.status, cache: h.cache, nosniff: h.nosniff, csp: h.csp, hsts: h.hsts };
      const cache = h.type === "text/event-stream" ? "no-store, no-transform" : "no-store";
      expected[asked.what] = { status: asked.status, cache, nosniff: "nosniff", csp: "frame-ancestors 'none'", hsts: null };
    }
    expect(seen).toEqual(expected);
  });

  test("a refused rate limit (429) carries them too", async () => {
    const limited = await createTenant(stack, { perMinute: 1 });
    await headersOf(stack.baseUrl, "GET", `/v1/articles?project_id=${limited.projectId}`, { token: limited.token });
    const h = await headersOf(stack.baseUrl, "GET", `/v1/articles?project_id=${limited.projectId}`, { token: limited.token });
    expect(h).toMatchObject({ status: 429, cache: "no-store", nosniff: "nosniff", csp: "frame-ancestors 'none'" });
  });

  test("the docs page keeps its own policy, which forbids framing too; its script keeps its caching", async () => {
    const page = await headersOf(stack.baseUrl, "GET", "/docs");
    expect(page).toMatchObject({ status: 200, cache: "no-store", nosniff: "nosniff" });
    expect(page.csp).toContain("frame-ancestors 'none'");
    expect(page.csp).toContain("default-src 'self'");
    const script = await headersOf(stack.baseUrl, "GET", "/docs/assets/redoc.standalone.js");
    expect(script).toMatchObject({ status: 200, cache: "public, max-age=3600", nosniff: "nosniff" });
  });

  test("with an https:// public address every answer carries Strict-Transport-Security", async () => {
    for (const asked of ASKED(tenant)) {
      const h = await headersOf(secure.baseUrl, asked.method, asked.path, asked);
      // /healthz answers 503 while a dependency's last ping went unanswered (a slow moment on a busy
      // machine); either answer must carry the headers, which are what this test checks.
      const status = asked.what === "health" && h.status === 503 ? 503 : asked.status;
      expect({ what: asked.what, status: h.status, hsts: h.hsts, cache: h.cache }).toEqual({
        what: asked.what,
        status,
        hsts: "max-age=31536000",
        cache: h.type === "text/event-stream" ? "no-store, no-transform" : "no-store",
      });
    }
  });
});
