// GET /v1/articles/{id}/content?format=markdown|html|text|jsonld and gRPC's ExportArticleContent:
// the current version's body as markdown, the webhook's sanitised HTML (byte for byte what the
// completion webhook delivered), plain text, and schema.org JSON-LD (an Article, and a FAQPage when
// the body has an FAQ) whose every node uses only properties schema.org defines for its type.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as grpc from "@grpc/grpc-js";
import { parseHTML } from "linkedom";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { createArticle } from "../harness/articles.ts";
import { closeClients, publicClients, type PublicClients } from "../harness/public-grpc.ts";
import { grpcOutcome } from "./reach-support.ts";
import { articleBody, waitForArticle, webhookReceiver } from "./generation-support.ts";
import { eventually } from "../harness/eventually.ts";

let stack: TestStack;
let tenant: Tenant;
let api: ApiClient;
let clients: PublicClients;
let article: any;
let webhookHtml: string;

const EDITED = [
  "# Choosing a grinder at home",
  "",
  "Burr grinders crush beans *evenly*. <script>alert('x')</script> Read [more](javascript:alert(1)) or [the guide](https://example.com/guide).",
  "",
  "- Burr",
  "- Blade",
  "",
  "## FAQ",
  "",
  "### Is a burr grinder worth it?",
  "",
  "Yes: the grind is even, so the cup is too.",
  "",
  "**How often should I clean it?**",
  "",
  "Once a month, with a brush.",
  "",
  "## Conclusion",
  "",
  "Grind fresh.",
].join("\n");

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
  clients = publicClients(Number(new URL(stack.publicGrpcUrl).port));
  const hook = webhookReceiver();
  try {
    const created = await createArticle(api, articleBody(tenant.projectId, { webhook_url: hook.url, keywords: "burr, grind" }));
    article = await waitForArticle(api, created.external_id, (a) => a.status === "published" || a.status === "failed");
    expect(article.status).toBe("published");
    const [delivered] = await eventually(async () => hook.received, (r) => r.length > 0, 10_000, "the completion webhook");
    webhookHtml = delivered!.body.content.html;
  } finally {
    hook.stop();
  }
}, 90_000);

afterAll(() => closeClients(clients));

const path = (format?: string) => `/v1/articles/${article.external_id}/content${format ? `?format=${format}` : ""}`;
const raw = (format?: string) => fetch(stack.baseUrl + path(format), { headers: { authorization: `Bearer ${tenant.token}` } });

// The properties schema.org defines (or inherits) for the types the export writes.
const THING = ["@id", "@type", "name", "description", "url", "image"];
const CREATIVE_WORK = [...THING, "headline", "inLanguage", "dateCreated", "datePublished", "dateModified", "keywords", "citation", "publisher", "mainEntity", "text", "caption"];
const SCHEMA: Record<string, string[]> = {
  Article: [...CREATIVE_WORK, "wordCount", "articleBody"],
  FAQPage: CREATIVE_WORK,
  Question: [...CREATIVE_WORK, "acceptedAnswer"],
  Answer: CREATIVE_WORK,
  ImageObject: [...CREATIVE_WORK, "width", "height", "contentUrl"],
  CreativeWork: CREATIVE_WORK,
  Organization: THING,
};

/** Every node with an @type, anywhere in the value. */
function nodesOf(value: unknown, out: Record<string, unknown>[] = []): Record<string, unknown>[] {
  if (Array.isArray(value)) for (const v of value) nodesOf(v, out);
  else if (value && typeof value === "object") {
    const node = value as Record<string, unknown>;
    if (typeof node["@type"] === "string") out.push(node);
    for (const [k, v] of Object.entries(node)) if (k !== "@context") nodesOf(v, out);
  }
  return out;
}

describe("exporting the current content", () => {
  test("html is the completion webhook's content.html, markdown the body, and the ETag names the version", async () => {
    const html = await raw("html");
    expect(html.status).toBe(200);
    expect(html.headers.get("content-type")).toStartWith("text/html");
    expect(html.headers.get("etag")).toBe(`"${article.current_version_id}"`);
    expect(await html.text()).toBe(webhookHtml);
    const markdown = await raw();
    expect(markdown.headers.get("content-type")).toStartWith("text/markdown");
    expect(await markdown.text()).toBe(article.content);
    const bad = await api.get(path("pdf"));
    expect(bad.status).toBe(422);
    expect(bad.body.errors.format).toBeDefined();
  });

  test("after an edit: html sanitised, text plain, JSON-LD an Article and a FAQPage of schema.org's types", async () => {
    const edited = await api.patch(`/v1/articles/${article.external_id}`, { content: EDITED, description: "How to pick a grinder." }, { headers: { "if-match": `"${article.current_version_id}"` } });
    expect(edited.status).toBe(200);
    // Once the edited version's originality check is recorded, the article stops changing.
    article = await eventually(async () => (await api.get(`/v1/articles/${article.external_id}`)).body.data, (a) => a.ai_detection_score !== null, 10_000, "the edited version's score");

    const html = await (await raw("html")).text();
    expect(html).not.toContain("<script");
    expect(html).not.toContain("javascript:");
    const { document } = parseHTML(`<!doctype html><html><body>${html}</body></html>`);
    expect(document.querySelector("h1")!.textContent).toBe("Choosing a grinder at home");
    expect(document.querySelector('a[href="https://example.com/guide"]')).not.toBeNull();
    expect(document.querySelectorAll("li").length).toBe(2);

    const text = await (await raw("text")).text();
    expect(text).not.toMatch(/[<>*#]/);
    expect(text).toContain("Choosing a grinder at home\n\nBurr grinders crush beans evenly.");
    expect(text).toContain("- Burr\n- Blade");

    const res = await raw("jsonld");
    expect(res.headers.get("content-type")).toStartWith("application/ld+json");
    const ld = JSON.parse(await res.text());
    expect(ld["@context"]).toBe("https://schema.org");
    const [main, faq] = ld["@graph"];
    expect(main).toMatchObject({
      "@type": "Article",
      headline: "Choosing a grinder at home",
      name: article.title,
      description: "How to pick a grinder.",
      inLanguage: "en",
      wordCount: article.actual_word_count,
      dateModified: article.updated_at,
    });
    expect(main.keywords).toEqual(["burr", "grind"]);
    for (const date of ["dateCreated", "datePublished", "dateModified"]) expect(Number.isNaN(Date.parse(main[date]))).toBe(false);
    expect(faq).toEqual({
      "@type": "FAQPage",
      "@id": `urn:uuid:${article.external_id}#faq`,
      mainEntity: [
        { "@type": "Question", name: "Is a burr grinder worth it?", acceptedAnswer: { "@type": "Answer", text: "Yes: the grind is even, so the cup is too." } },
        { "@type": "Question", name: "How often should I clean it?", acceptedAnswer: { "@type": "Answer", text: "Once a month, with a brush." } },
      ],
    });
    for (const node of nodesOf(ld["@graph"])) {
      const allowed = SCHEMA[node["@type"] as string];
      expect(allowed).toBeDefined();
      for (const property of Object.keys(node)) expect(`${node["@type"]}.${property}:${allowed!.includes(property)}`).toBe(`${node["@type"]}.${property}:true`);
    }
  });

  test("over gRPC, the same content; another account's article is NOT_FOUND", async () => {
    const metadata = new grpc.Metadata();
    metadata.set("authorization", `Bearer ${tenant.token}`);
    const exported = await grpcOutcome(clients, "ArticleService", "ExportArticleContent", { id: article.external_id, format: "html" }, metadata);
    expect(exported.code).toBe("OK");
    expect(exported.reply).toMatchObject({ format: "html", content_type: "text/html; charset=utf-8", version_id: String(article.current_version_id) });
    expect(exported.reply.content).toBe(await (await raw("html")).text());
    const other = await createTenant(stack);
    const foreign = new grpc.Metadata();
    foreign.set("authorization", `Bearer ${other.token}`);
    expect((await grpcOutcome(clients, "ArticleService", "ExportArticleContent", { id: article.external_id }, foreign)).code).toBe("NOT_FOUND");
    expect((await apiClient(stack.baseUrl, other.token).get(path("text"))).status).toBe(404);
  });

  test("an article without content yet is 409", async () => {
    const created = await createArticle(api, articleBody(tenant.projectId, { title: "Not written yet" }));
    await api.post(`/v1/articles/${created.external_id}/cancel`);
    const res = await api.get(`/v1/articles/${created.external_id}/content?format=html`);
    expect(res.status).toBe(409);
  });
});
