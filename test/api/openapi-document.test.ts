// The OpenAPI document (/docs/json): every route the gateway serves is in it, with the summary
// the route declares, and real answers validate against the schemas it documents.
import { fixedCredential } from "../../services/kit/src/workload-identity.ts";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import IORedis from "ioredis";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { buildApp } from "../../gateway/src/app.ts";
import { connectServices } from "../../gateway/src/services.ts";
import type { Logger } from "../../services/kit/src/logger.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { articleBody } from "../harness/articles.ts";

const silent: Logger = { debug() {}, info() {}, warn() {}, error() {} } as unknown as Logger;
// The reference page and the document itself are not part of the API they describe.
const DOCS_ROUTES = new Set(["/docs", "/docs/json", "/docs/assets/redoc.standalone.js"]);
/** The dashboard's page and its session-authenticated API serve its own pages, not API clients. */
const isDashboardRoute = (path: string) => path === "/dashboard" || path.startsWith("/dashboard/");

let stack: TestStack;
let tenant: Tenant;
let api: ApiClient;
let document: any;
let ajv: Ajv2020;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
  const res = await api.get("/docs/json");
  expect(res.status).toBe(200);
  document = res.body;
  ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(document, "openapi.json");
});

/** The errors of a value against a schema of the document (null when it is valid). */
function problems(pointer: string, value: unknown) {
  const validate = ajv.getSchema(`openapi.json#${pointer}`)!;
  return validate(value) ? null : validate.errors;
}

/** The JSON schema of an operation's answer with that status. */
function responseSchemaPointer(path: string, method: string, status: string) {
  const escaped = path.replace(/~/g, "~0").replace(/\//g, "~1");
  return `/paths/${escaped}/${method}/responses/${status}/content/application~1json/schema`;
}

describe("the OpenAPI document", () => {
  let app: ReturnType<typeof buildApp>;
  const redis = new IORedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", { lazyConnect: true });
  const subscriber = new IORedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", { lazyConnect: true });
  beforeAll(() => {
    const none = "http://127.0.0.1:9";
    const clients = connectServices({ services: { accountsBilling: none, workflowCatalog: none, articleStore: none, generationRunner: none, webhookDispatcher: none } }, fixedCredential("none"));
    app = buildApp({ clients, redis, subscriber, redisPrefix: `openapi-doc-${process.pid}`, logger: silent });
  });
  afterAll(() => {
    redis.disconnect();
    subscriber.disconnect();
  });

  test("is OpenAPI 3.1 with the bearer scheme, the error responses and the request schemas", () => {
    expect(document.openapi).toBe("3.1.0");
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    expect(document.security).toEqual([{ bearerAuth: [] }]);
    for (const name of ["Article", "Workflow", "Step", "User", "Estimate", "StepBreakdown", "ArticleEvent", "ArticleCreate", "StepCreate", "StepUpdate", "ValidationError", "GateError", "PlainError"]) {
      expect(document.components.schemas[name]).toBeDefined();
    }
    const create = document.paths["/v1/articles"].post;
    for (const status of ["201", "401", "402", "403", "404", "413", "422", "429"]) expect(create.responses[status]).toBeDefined();
    expect(create.parameters).toContainEqual({ $ref: "#/components/parameters/IdempotencyKey" });
    expect(document.components.responses.RateLimited.headers["Retry-After"]).toBeDefined();
    expect(Object.keys(document.components.headers)).toEqual(expect.arrayContaining(["RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy"]));
  });

  test("takes the creation body's bounds and enumerations from the validator's field table", () => {
    const body = document.components.schemas.ArticleCreate;
    expect(body.required).toEqual(["project_id", "title", "article_type", "target_word_count", "tone", "point_of_view", "language"]);
    expect(body.properties.title).toMatchObject({ minLength: 3, maxLength: 255 });
    expect(body.properties.target_word_count).toMatchObject({ minimum: 100, maximum: 10000 });
    expect(body.properties.tone.enum).toEqual(["professional", "authoritative", "friendly", "conversational", "casual", "excited", "humorous"]);
    expect(body.properties.research_max_sources).toMatchObject({ minimum: 1, maximum: 20, default: 5 });
    const list = document.paths["/v1/articles"].get.parameters;
    // The list refuses no per_page: the document gives the clamp in words, not as bounds a client would think refused.
    const perPage = list.find((p: any) => p.name === "per_page");
    expect(perPage.schema).toMatchObject({ type: "integer", default: 20 });
    expect(perPage.schema.maximum).toBeUndefined();
    expect(perPage.description).toContain("at most 100: a larger value reads 100");
    expect(document.components.schemas.StepCreate.properties.timeout_seconds.anyOf[0]).toMatchObject({ minimum: 30, maximum: 600 });
  });

  test("has every route the gateway serves, with the route's own summary", () => {
    const served = app.routes.filter((r) => !DOCS_ROUTES.has(r.path) && !isDashboardRoute(r.path));
    expect(served.length).toBeGreaterThan(15);
    const missing: string[] = [];
    for (const route of served) {
      const path = route.path.replace(/:([A-Za-z_]+)/g, "{$1}");
      const operation = document.paths[path]?.[route.method.toLowerCase()];
      if (!operation) {
        missing.push(`${route.method} ${path}`);
        continue;
      }
      const declared = (route.hooks as { detail?: { summary?: string } } | undefined)?.detail?.summary;
      if (declared) expect(`${route.method} ${path}: ${operation.summary}`).toBe(`${route.method} ${path}: ${declared}`);
    }
    expect(missing).toEqual([]);
    // And nothing documented that is not served.
    const routes = new Set(served.map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:([A-Za-z_]+)/g, "{$1}")}`));
    for (const [path, operations] of Object.entries<any>(document.paths)) {
      for (const method of Object.keys(operations)) expect(routes.has(`${method} ${path}`)).toBe(true);
    }
  });
});

describe("real answers validate against the document", () => {
  test("POST /v1/articles: the 201 body, the Article, and a 422", async () => {
    const created = await api.post("/v1/articles", articleBody(tenant.projectId, { keywords: "kettle, bloom", webhook_url: "https://hooks.example.com/a" }));
    expect(created.status).toBe(201);
    expect(problems(responseSchemaPointer("/v1/articles", "post", "201"), created.body)).toBeNull();
    expect(problems("/components/schemas/Article", created.body.data)).toBeNull();

    const read = await api.get(`/v1/articles/${created.body.data.external_id}`);
    expect(problems(responseSchemaPointer("/v1/articles/{id}", "get", "200"), read.body)).toBeNull();
    const list = await api.get("/v1/articles?per_page=5");
    expect(problems(responseSchemaPointer("/v1/articles", "get", "200"), list.body)).toBeNull();

    const invalid = await api.post("/v1/articles", articleBody(tenant.projectId, { title: "ab", tone: "grumpy" }));
    expect(invalid.status).toBe(422);
    expect(problems("/components/schemas/ValidationError", invalid.body)).toBeNull();
    // The document rejects what the validator rejects.
    expect(problems("/components/schemas/ArticleCreate", articleBody(tenant.projectId, { title: "ab", tone: "grumpy" }))).not.toBeNull();
    expect(problems("/components/schemas/ArticleCreate", articleBody(tenant.projectId))).toBeNull();
  });

  test("the estimate, the user, a workflow step and the gate's 401", async () => {
    const estimate = await api.post("/v1/articles/estimate", articleBody(tenant.projectId));
    expect(estimate.status).toBe(200);
    expect(problems(responseSchemaPointer("/v1/articles/estimate", "post", "200"), estimate.body)).toBeNull();

    const user = await api.get("/user");
    expect(problems("/components/schemas/User", user.body)).toBeNull();

    const step = await api.post(`/v1/projects/${tenant.projectId}/workflows`, { article_type: "openapi_check", step_number: 1, step_name: "Draft", system: "You write.", user: "Write about {title}.", output_format: "markdown" });
    expect(step.status).toBe(201);
    expect(problems(responseSchemaPointer("/v1/projects/{project}/workflows", "post", "201"), step.body)).toBeNull();
    const workflows = await api.get(`/v1/projects/${tenant.projectId}/workflows`);
    expect(problems(responseSchemaPointer("/v1/projects/{project}/workflows", "get", "200"), workflows.body)).toBeNull();

    const unauthenticated = await api.withToken("not-a-key").get("/v1/articles");
    expect(unauthenticated.status).toBe(401);
    expect(problems("/components/schemas/GateError", unauthenticated.body)).toBeNull();
  });
});
