// Characters Postgres cannot store (NUL, unpaired UTF-16 surrogates) in every string field of
// every endpoint, in bodies, query strings and path segments: a 422 naming the field, 404 for a
// path identifier, or in a list's query a filter that matches nothing (the lists refuse no query,
// spec 4.2 and 4.4), never a 500 and nothing written. Oversized requests: a JSON error in the
// plain shape (413 body, 414 URL, 431 headers). The services refuse the same text from their own
// gRPC callers with INVALID_ARGUMENT.
import { beforeAll, describe, expect, test } from "bun:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { ArticleStoreService } from "../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { WorkflowCatalogService } from "../../proto/gen/articles/workflow_catalog/v1/workflows_pb.ts";
import { fieldErrorsOf } from "../../services/kit/src/errors.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { apiClient, type ApiClient, type ApiResponse } from "../harness/http.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { articleBody } from "../harness/articles.ts";
import { stackClient, stackCredential, storeClient } from "../harness/service-clients.ts";
import { stepBody } from "./workflows-fixtures.ts";

let stack: TestStack;
let tenant: Tenant;
let api: ApiClient;
/** /v1/projects/{project}/workflows of the tenant. */
let workflows: string;
let stepId: number;

// JSON.stringify writes these as the escapes \u0000, \ud800 and \udc00, as a client would send them.
const BAD_TEXT: Record<string, string> = {
  NUL: "before\u0000after",
  "a lone high surrogate": "before\ud800after",
  "a lone low surrogate": "\udc00",
};
// The only way to write those in a URL: %00, and the surrogates' (invalid) UTF-8 forms.
const BAD_URL_TEXT: Record<string, string> = {
  NUL: "before%00after",
  "a lone high surrogate": "before%ED%A0%80after",
  "a lone low surrogate": "%ED%B0%80",
};
const BAD_PATH_SEGMENTS = ["%00", "1%00", "%ED%A0%80", "%ED%B0%80"];

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
  workflows = `/v1/projects/${tenant.projectId}/workflows`;
  const created = await api.post(workflows, stepBody({ article_type: "bad_bytes_base" }));
  expect(created.status).toBe(201);
  stepId = created.body.data.id;
});

/** A 422 in the validation shape with `field` among the errors; its messages. */
function expectRefusal(res: ApiResponse, field: string): string[] {
  if (res.status !== 422 || !res.body?.errors?.[field]) throw new Error(`expected 422 on ${field}, got ${res.status} ${JSON.stringify(res.body)}`);
  expect(typeof res.body.message).toBe("string");
  return res.body.errors[field];
}

/** The text rule's own message, not some other rule that happened to fail. */
function expectTextRule(res: ApiResponse, field: string): void {
  expect(expectRefusal(res, field).join(" ")).toContain("must not contain NUL (U+0000) or unpaired surrogate characters");
}

function expectNotFound(res: ApiResponse): void {
  if (res.status !== 404) throw new Error(`expected 404, got ${res.status} ${JSON.stringify(res.body)}`);
  expect(typeof res.body.message).toBe("string");
}

/** A list answered 200 with nothing in it (the article list's meta also says there is no next page). */
function expectMatchesNothing(res: ApiResponse, articles = false): void {
  if (res.status !== 200) throw new Error(`expected 200, got ${res.status} ${JSON.stringify(res.body)}`);
  const meta = { current_page: 1, last_page: 1, per_page: 20, total: 0, ...(articles ? { next_cursor: null } : {}) };
  expect(res.body).toEqual({ success: true, data: [], meta });
}

/** A list answered 200 on its first page of the default size. */
function expectDefaultWindow(res: ApiResponse): void {
  if (res.status !== 200) throw new Error(`expected 200, got ${res.status} ${JSON.stringify(res.body)}`);
  expect(res.body.meta).toMatchObject({ current_page: 1, per_page: 20 });
}

/** A plain `{message}` error with this status. */
function expectPlainError(res: ApiResponse, status: number): void {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status} ${JSON.stringify(res.body).slice(0, 300)}`);
  expect(Object.keys(res.body)).toEqual(["message"]);
  expect(typeof res.body.message).toBe("string");
}

describe("the requests found answering 500 answer 422 on the field", () => {
  test("POST /v1/articles with article_type NUL", async () => {
    expectTextRule(await api.post("/v1/articles", articleBody(tenant.projectId, { article_type: "\u0000" })), "article_type");
  });

  test("POST /v1/projects/{p}/workflows with article_type NUL", async () => {
    expectTextRule(await api.post(workflows, stepBody({ article_type: "\u0000" })), "article_type");
  });

  test("POST /v1/projects/{p}/workflows/duplicate with new_article_type NUL", async () => {
    expectTextRule(await api.post(`${workflows}/duplicate`, { source_article_type: "blog_post", new_article_type: "\u0000" }), "new_article_type");
  });

  test("GET /v1/projects/{p}/workflows?article_type=%00 (now a list that matches nothing: the list refuses no query, spec 4.4)", async () => {
    expectMatchesNothing(await api.get(`${workflows}?article_type=%00`));
  });
});

describe("POST /v1/articles: every string field", () => {
  const fields = [
    "title",
    "article_type",
    "target_keyword",
    "tone",
    "point_of_view",
    "language",
    "country_targeting",
    "webhook_url",
    "additional_context",
    "additional_instruction",
    "target_audience",
    "model",
    "heading_capitalization",
    "status",
    "image_aspect_ratio",
  ];
  for (const [name, bad] of Object.entries(BAD_TEXT)) {
    test(`${name} in each field is 422 on that field`, async () => {
      for (const field of fields) expectTextRule(await api.post("/v1/articles", articleBody(tenant.projectId, { [field]: bad })), field);
    });

    test(`${name} in an item of each list is 422 on that item`, async () => {
      expectTextRule(await api.post("/v1/articles", articleBody(tenant.projectId, { keywords: ["coffee", bad] })), "keywords.1");
      expectTextRule(await api.post("/v1/articles", articleBody(tenant.projectId, { keywords: `coffee, ${bad}` })), "keywords.1");
      for (const field of ["research_include_domains", "research_exclude_domains"]) {
        expectTextRule(await api.post("/v1/articles", articleBody(tenant.projectId, { [field]: [bad] })), `${field}.0`);
      }
    });
  }

  test("every bad field of one body is reported at once, and nothing is created", async () => {
    const res = await api.post("/v1/articles", articleBody(tenant.projectId, { title: "a\u0000bc", target_keyword: "\ud800", additional_context: "x\udc00" }));
    for (const field of ["title", "target_keyword", "additional_context"]) expectTextRule(res, field);
    const list = await api.get(`/v1/articles?project_id=${tenant.projectId}`);
    expect(list.status).toBe(200);
    expect(list.body.meta.total).toBe(0);
  });

  test("bytes that are not UTF-8 (a surrogate's UTF-8 form) are a 422 on the body", async () => {
    const json = new TextEncoder().encode(JSON.stringify(articleBody(tenant.projectId, { title: "SURROGATE" })));
    const text = new TextDecoder().decode(json);
    const at = text.indexOf("SURROGATE");
    const bytes = new Uint8Array([...json.slice(0, at), 0xed, 0xa0, 0x80, ...json.slice(at + "SURROGATE".length)]);
    const res = await fetch(`${stack.baseUrl}/v1/articles`, { method: "POST", headers: { authorization: `Bearer ${tenant.token}`, "content-type": "application/json" }, body: bytes });
    expect(res.status).toBe(422);
    const body = (await res.json()) as { errors: Record<string, string[]> };
    expect(body.errors.body.join(" ")).toContain("UTF-8");
  });

  test("text with characters outside the BMP (well-formed surrogate pairs) is accepted", async () => {
    const res = await api.post("/v1/articles", articleBody(tenant.projectId, { title: "Pour-over ☕ at home 😀", target_keyword: "𝔠𝔬𝔣𝔣𝔢𝔢", keywords: ["🫘 beans"] }));
    expect(res.status).toBe(201);
    expect(res.body.data.title).toBe("Pour-over ☕ at home 😀");
  });
});

describe("GET /v1/articles and /v1/articles/{id}", () => {
  for (const [name, bad] of Object.entries(BAD_URL_TEXT)) {
    test(`${name} in a filter matches nothing, in page or per_page reads the default (the list refuses no query, spec 4.2)`, async () => {
      for (const field of ["status", "project_id"]) expectMatchesNothing(await api.get(`/v1/articles?${field}=${bad}`), true);
      for (const field of ["page", "per_page"]) expectDefaultWindow(await api.get(`/v1/articles?${field}=${bad}`));
    });
  }

  test("a bad identifier in the path is 404", async () => {
    for (const segment of BAD_PATH_SEGMENTS) expectNotFound(await api.get(`/v1/articles/${segment}`));
  });
});

describe("workflow endpoints: every string field, query parameter and path segment", () => {
  const stepFields = ["article_type", "step_name", "step_description", "step_icon", "system", "user", "output_format"];

  for (const [name, bad] of Object.entries(BAD_TEXT)) {
    test(`${name}: creating a step is 422 on each field, and nothing is created`, async () => {
      for (const field of stepFields) expectTextRule(await api.post(workflows, stepBody({ [field]: bad })), field);
      const list = await api.get(workflows);
      expect(list.body.data.map((w: { slug: string }) => w.slug)).toEqual(["bad_bytes_base"]);
    });

    test(`${name}: in a json_schema key or string is 422 on json_schema`, async () => {
      const schemas = [
        { type: "object", description: bad, properties: {} },
        { type: "object", properties: { [bad]: { type: "string" } } },
      ];
      for (const json_schema of schemas) expectTextRule(await api.post(workflows, stepBody({ output_format: "json", json_schema })), "json_schema");
    });

    test(`${name}: updating a step (PATCH and PUT) is 422 on each field, and nothing changes`, async () => {
      for (const method of ["patch", "put"] as const) {
        for (const field of stepFields) expectTextRule(await api[method](`${workflows}/${stepId}`, { [field]: bad }), field);
        expectTextRule(await api[method](`${workflows}/${stepId}`, { output_format: "json", json_schema: { type: "object", title: bad } }), "json_schema");
      }
      const step = await api.get(`${workflows}/${stepId}`);
      expect(step.body.data).toMatchObject({ article_type: "bad_bytes_base", step_name: "Draft", output_format: "markdown" });
    });

    test(`${name}: duplicating is 422 on each type name`, async () => {
      for (const field of ["source_article_type", "new_article_type"]) {
        const body = { source_article_type: "bad_bytes_base", new_article_type: "bad_bytes_copy", [field]: bad };
        expectTextRule(await api.post(`${workflows}/duplicate`, body), field);
      }
    });
  }

  for (const [name, bad] of Object.entries(BAD_URL_TEXT)) {
    test(`${name} in article_type matches nothing, in page or per_page reads the default (the list refuses no query, spec 4.4)`, async () => {
      expectMatchesNothing(await api.get(`${workflows}?article_type=${bad}`));
      for (const field of ["page", "per_page"]) expectDefaultWindow(await api.get(`${workflows}?${field}=${bad}`));
    });
  }

  test("reorder: a string where an id belongs is 422 on that item", async () => {
    expectRefusal(await api.post(`${workflows}/reorder`, { steps: [{ id: "\u0000", step_number: 1 }] }), "steps.0.id");
    expectRefusal(await api.post(`${workflows}/reorder`, { steps: [{ id: stepId, step_number: "\ud800" }] }), "steps.0.step_number");
  });

  test("a bad project or step segment in any path is 404", async () => {
    for (const segment of BAD_PATH_SEGMENTS) {
      const projectPaths = [`/v1/projects/${segment}/workflows`];
      expectNotFound(await api.get(projectPaths[0]));
      expectNotFound(await api.post(projectPaths[0], stepBody()));
      expectNotFound(await api.post(`${projectPaths[0]}/reorder`, { steps: [{ id: stepId, step_number: 1 }] }));
      expectNotFound(await api.post(`${projectPaths[0]}/duplicate`, { source_article_type: "blog_post", new_article_type: "bad_bytes_copy" }));
      expectNotFound(await api.get(`${projectPaths[0]}/${stepId}`));
      expectNotFound(await api.get(`${workflows}/${segment}`));
      expectNotFound(await api.patch(`${workflows}/${segment}`, { step_name: "Renamed" }));
      expectNotFound(await api.put(`${workflows}/${segment}`, { step_name: "Renamed" }));
      expectNotFound(await api.delete(`${workflows}/${segment}`));
    }
  });

  test("text outside the BMP is accepted in a step", async () => {
    const res = await api.post(workflows, stepBody({ article_type: "emoji_notes", step_name: "Draft ✍️", step_icon: "📝" }));
    expect(res.status).toBe(201);
    expect(res.body.data.step_icon).toBe("📝");
  });
});

describe("oversized requests get a JSON error in the plain shape", () => {
  const MiB = 1024 * 1024;

  test("a body over 1 MiB is 413, before authentication, with or without a declared length", async () => {
    const big = JSON.stringify(articleBody(tenant.projectId, { additional_context: "x".repeat(MiB + 10) }));
    expectPlainError(await api.post("/v1/articles", undefined, { rawBody: big }), 413);
    expectPlainError(await apiClient(stack.baseUrl).post("/v1/articles", undefined, { rawBody: big }), 413);
    // Sent in chunks without Content-Length: counted as it arrives.
    const bytes = new TextEncoder().encode(big);
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 64 * 1024) controller.enqueue(bytes.slice(i, i + 64 * 1024));
        controller.close();
      },
    });
    const res = await fetch(`${stack.baseUrl}${workflows}`, { method: "POST", headers: { authorization: `Bearer ${tenant.token}`, "content-type": "application/json" }, body: chunked });
    expectPlainError({ status: res.status, body: await res.json(), headers: res.headers }, 413);
  });

  test("a body just under the limit is read and validated", async () => {
    const res = await api.post("/v1/articles", articleBody(tenant.projectId, { additional_context: "x".repeat(MiB - 4096) }));
    expect(expectRefusal(res, "additional_context")[0]).toContain("25000");
  });

  test("a body nesting arrays or objects thousands of levels deep is 422 on body, not a crash", async () => {
    const deep = (levels: number) => '{"a":'.repeat(levels) + "1" + "}".repeat(levels);
    const schema = `{"type":"object","properties":${deep(50_000)}}`;
    const step = JSON.stringify(stepBody({ output_format: "json" })).replace(/}$/, `,"json_schema":${schema}}`);
    expect(expectRefusal(await api.post(workflows, undefined, { rawBody: step }), "body")[0]).toContain("levels deep");
    const article = JSON.stringify(articleBody(tenant.projectId)).replace(/}$/, `,"keywords":${"[".repeat(100_000)}${"]".repeat(100_000)}}`);
    expectRefusal(await api.post("/v1/articles", undefined, { rawBody: article }), "body");
    // A schema of ordinary depth is still accepted.
    const ordinary = { type: "object", properties: { a: { type: "object", properties: { b: { type: "array", items: { type: "string" } } }, required: ["b"], additionalProperties: false } }, required: ["a"], additionalProperties: false };
    expect((await api.post(workflows, stepBody({ article_type: "deep_enough", output_format: "json", json_schema: ordinary }))).status).toBe(201);
  });

  test("a URL over 8 KiB is 414, however long, on any path", async () => {
    for (const length of [9000, 100_000, 2_000_000]) expectPlainError(await api.get(`/v1/articles?status=${"a".repeat(length)}`), 414);
    for (const path of ["/user", "/no-such-path", `/v1/articles/${"1".repeat(9000)}`]) expectPlainError(await api.get(`${path}?q=${"a".repeat(9000)}`), 414);
    // Just under the limit the request is served: a status no article has matches nothing.
    expectMatchesNothing(await api.get(`/v1/articles?status=${"a".repeat(8000)}`), true);
  });

  test("headers over 32 KiB are 431", async () => {
    expectPlainError(await api.get("/v1/articles", { headers: { "x-padding": "a".repeat(40 * 1024) } }), 431);
    expectPlainError(await api.get("/v1/articles", { headers: { "x-padding": "a".repeat(1024 * 1024) } }), 431);
  });
});

describe("the services refuse the same text from their own gRPC callers", () => {
  test("NUL in a request field is INVALID_ARGUMENT naming the field, also inside a nested message", async () => {
    const catalog = stackClient(stack, WorkflowCatalogService, stack.env.WORKFLOW_CATALOG_URL, "gateway");
    const projectId = BigInt(tenant.projectId);
    const refusals: [() => Promise<unknown>, string][] = [
      [() => catalog.listWorkflows({ projectId, articleType: "\u0000" }), "article_type"],
      [() => catalog.createStep({ projectId, articleType: "notes", stepNumber: 1, stepName: "a\u0000", system: "s", user: "u", outputFormat: "text" }), "step_name"],
      [() => catalog.createStep({ projectId, articleType: "notes", stepNumber: 1, stepName: "n", system: "s", user: "u", outputFormat: "json", jsonSchema: '{"type":"object","title":"\\u0000"}' }), "json_schema"],
      [() => catalog.duplicateWorkflow({ projectId, sourceArticleType: "blog_post", newArticleType: "\u0000" }), "new_article_type"],
      [() => storeClient(stack).getArticle({ identifier: "\u0000" }), "identifier"],
      [() => storeClient(stack).createArticle({ article: { externalId: crypto.randomUUID(), projectId, title: "Ti\u0000tle" } }), "article.title"],
    ];
    for (const [call, field] of refusals) {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      if (!(error instanceof ConnectError)) throw new Error(`expected INVALID_ARGUMENT on ${field}, the call succeeded or failed otherwise: ${String(error)}`);
      expect(error.code).toBe(Code.InvalidArgument);
      expect(Object.keys(fieldErrorsOf(error))).toContain(field);
    }
  });

  test("a lone surrogate sent as JSON (Connect protocol) is INVALID_ARGUMENT", async () => {
    const url = `${stack.env.ARTICLE_STORE_URL}/${ArticleStoreService.typeName}/${ArticleStoreService.method.getArticle.name}`;
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: stackCredential(stack, "gateway").authorization() },
      body: '{"identifier":"\\ud800"}',
    });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; message: string };
    expect(body.code).toBe("invalid_argument");
    expect(body.message).toContain("identifier");
  });
});
