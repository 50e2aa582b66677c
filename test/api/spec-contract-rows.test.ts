// The spec's tables read rule by rule, as a new user would try them, over HTTP and over the
// public gRPC API (articles.api.v1) where the operation exists there:
// - 4.2: GET /v1/articles answers 200, 401, 402 or 429 only: an unknown status and a project the
//   caller cannot see match nothing (the same answer as an empty project), the page window clamps;
// - 4.4: GET …/workflows answers 200, 401, 402, 403, 404 or 429 only;
// - 4.3, 4.4, 7: error bodies are exactly the spec's shapes, the request id in X-Request-Id only;
// - 4.3: an identifier that is a number (leading zeros included) or a UUID is looked up;
// - 4.7, 2.3, 9: an update changes only what it names, and one that changes nothing is no change.
import { beforeAll, describe, expect, test } from "bun:test";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { ArticleService } from "../../proto/gen/articles/api/v1/articles_pb.ts";
import { WorkflowService } from "../../proto/gen/articles/api/v1/workflows_pb.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { addMemberWithKey, createProject, createTenant, type Tenant } from "../harness/tenants.ts";
import { articleBody } from "../harness/articles.ts";
import { stepBody } from "./workflows-fixtures.ts";

const OUTLINE_SCHEMA = {
  type: "object",
  properties: { headings: { type: "array", items: { type: "string" } } },
  required: ["headings"],
  additionalProperties: false,
};
const EMPTY_PAGE = { success: true, data: [], meta: { current_page: 1, last_page: 1, per_page: 20, total: 0 } };
/** The article list's meta adds its cursor to the next page: none on an empty list. */
const EMPTY_ARTICLE_PAGE = { ...EMPTY_PAGE, meta: { ...EMPTY_PAGE.meta, next_cursor: null } };

let stack: TestStack;
let owner: Tenant;
let api: ApiClient;
let stranger: Tenant;
/** Three articles in the owner's project, newest first. */
let created: { id: number; external_id: string }[];
let emptyProject: number;
let grpcArticles: Client<typeof ArticleService>;
let grpcWorkflows: Client<typeof WorkflowService>;

const keyed = (token: string) => ({ headers: { authorization: `Bearer ${token}` } });

beforeAll(async () => {
  stack = await useStack();
  owner = await createTenant(stack);
  api = apiClient(stack.baseUrl, owner.token);
  stranger = await createTenant(stack);
  await apiClient(stack.baseUrl, stranger.token).post("/v1/articles", articleBody(stranger.projectId, { title: "The stranger's article" }));
  created = [];
  for (const title of ["First of three", "Second of three", "Third of three"]) {
    const res = await api.post("/v1/articles", articleBody(owner.projectId, { title }));
    expect(res.status).toBe(201);
    created.unshift(res.body.data);
  }
  emptyProject = await createProject(stack, owner.accountId, "Nothing here yet");
  const transport = createGrpcTransport({ baseUrl: stack.publicGrpcUrl, defaultTimeoutMs: 10_000 });
  grpcArticles = createClient(ArticleService, transport);
  grpcWorkflows = createClient(WorkflowService, transport);
});

const grpcRefusal = (call: Promise<unknown>) =>
  call.then(
    () => {
      throw new Error("the call was not refused");
    },
    (error: unknown) => ConnectError.from(error),
  );

describe("4.2 GET /v1/articles answers 200, 401, 402 or 429, never 403, 404 or 422", () => {
  test("a status that is not one of the spec's values matches nothing", async () => {
    for (const status of ["done", "COMPLETED", "%00", "%ED%A0%80"]) {
      const res = await api.get(`/v1/articles?status=${status}`);
      expect({ status, code: res.status, body: res.body }).toEqual({ status, code: 200, body: EMPTY_ARTICLE_PAGE });
    }
    // A spec value still filters exactly.
    const queued = await api.get(`/v1/articles?status=queued&project_id=${owner.projectId}`);
    expect(queued.status).toBe(200);
    const reply = await grpcArticles.listArticles({ status: "done" }, keyed(owner.token));
    expect(reply.articles).toEqual([]);
    expect(reply.meta).toMatchObject({ currentPage: 1, lastPage: 1, perPage: 20, total: 0n });
  });

  test("a project_id the caller cannot see restricts to nothing, answered exactly as an empty project of its own", async () => {
    const empty = await api.get(`/v1/articles?project_id=${emptyProject}`);
    expect({ code: empty.status, body: empty.body }).toEqual({ code: 200, body: EMPTY_ARTICLE_PAGE });
    const limited = await addMemberWithKey(stack, owner, "viewer", [emptyProject]);
    const cases: [string, ApiClient, string][] = [
      ["another account's project", api, String(stranger.projectId)],
      ["a project that does not exist", api, "999999999"],
      ["not a number", api, "abc"],
      ["a negative number", api, "-1"],
      ["zero", api, "0"],
      ["a project of the account the member cannot view", apiClient(stack.baseUrl, limited.token), String(owner.projectId)],
    ];
    for (const [label, client, projectId] of cases) {
      const res = await client.get(`/v1/articles?project_id=${projectId}`);
      expect({ label, code: res.status, body: res.body }).toEqual({ label, code: 200, body: empty.body });
    }
    // gRPC: the same empty page for another account's project as for an empty own one.
    const own = await grpcArticles.listArticles({ projectId: BigInt(emptyProject) }, keyed(owner.token));
    const theirs = await grpcArticles.listArticles({ projectId: BigInt(stranger.projectId) }, keyed(owner.token));
    expect(theirs.articles).toEqual([]);
    expect(theirs.meta).toEqual(own.meta);
  });

  test("page below 1 reads page 1; per_page below 1 takes the default and above 100 the maximum", async () => {
    const base = `/v1/articles?project_id=${owner.projectId}`;
    const ids = (res: { body: { data: { id: number }[] } }) => res.body.data.map((a) => a.id);
    const all = created.map((a) => a.id);
    for (const page of ["0", "-3", "x", "1.5"]) {
      const res = await api.get(`${base}&page=${page}&per_page=2`);
      expect({ page, code: res.status, ids: ids(res), meta: res.body.meta }).toEqual({ page, code: 200, ids: all.slice(0, 2), meta: { current_page: 1, last_page: 2, per_page: 2, total: 3, next_cursor: expect.any(String) } });
    }
    for (const [perPage, used] of [["0", 20], ["-2", 20], ["x", 20], ["500", 100], ["100", 100], ["101", 100]] as const) {
      const res = await api.get(`${base}&per_page=${perPage}`);
      expect({ perPage, code: res.status, ids: ids(res), meta: res.body.meta }).toEqual({ perPage, code: 200, ids: all, meta: { current_page: 1, last_page: 1, per_page: used, total: 3, next_cursor: null } });
    }
    const far = await api.get(`${base}&page=99999999999`);
    expect({ code: far.status, data: far.body.data, page: far.body.meta.current_page }).toEqual({ code: 200, data: [], page: 2_147_483_647 });

    const clamped = await grpcArticles.listArticles({ projectId: BigInt(owner.projectId), page: -3, perPage: 500 }, keyed(owner.token));
    expect(clamped.articles.map((a) => Number(a.id))).toEqual(all);
    expect(clamped.meta).toMatchObject({ currentPage: 1, perPage: 100, total: 3n });
    const defaulted = await grpcArticles.listArticles({ projectId: BigInt(owner.projectId), perPage: 0 }, keyed(owner.token));
    expect(defaulted.meta?.perPage).toBe(20);
  });

  test("the gate's answers stay: 401 without a key", async () => {
    expect((await apiClient(stack.baseUrl).get("/v1/articles?status=done&per_page=0")).status).toBe(401);
  });
});

describe("4.4 GET …/workflows answers 200, 401, 402, 403, 404 or 429, never 422", () => {
  test("page and per_page clamp as the article list's do; an article_type no slug can be matches nothing", async () => {
    const base = `/v1/projects/${owner.projectId}/workflows`;
    for (const type of ["alpha", "bravo", "charlie"]) expect((await api.post(base, stepBody({ article_type: type }))).status).toBe(201);
    for (const [query, meta] of [
      ["per_page=1000", { current_page: 1, last_page: 1, per_page: 100, total: 3 }],
      ["per_page=0", { current_page: 1, last_page: 1, per_page: 20, total: 3 }],
      ["per_page=-2", { current_page: 1, last_page: 1, per_page: 20, total: 3 }],
      ["per_page=x", { current_page: 1, last_page: 1, per_page: 20, total: 3 }],
      ["page=0&per_page=2", { current_page: 1, last_page: 2, per_page: 2, total: 3 }],
      ["page=abc&per_page=2", { current_page: 1, last_page: 2, per_page: 2, total: 3 }],
    ] as const) {
      const res = await api.get(`${base}?${query}`);
      expect({ query, code: res.status, meta: res.body.meta }).toEqual({ query, code: 200, meta });
    }
    const unstorable = await api.get(`${base}?article_type=%00`);
    expect({ code: unstorable.status, body: unstorable.body }).toEqual({ code: 200, body: EMPTY_PAGE });

    const reply = await grpcWorkflows.listWorkflows({ projectId: BigInt(owner.projectId), page: -1, perPage: 500 }, keyed(owner.token));
    expect(reply.workflows.map((w) => w.slug)).toEqual(["alpha", "bravo", "charlie"]);
    expect(reply.meta).toMatchObject({ currentPage: 1, perPage: 100, total: 3n });
  });

  test("the errors it lists stay: 404 for no such project, 403 with a message only", async () => {
    const missing = await api.get("/v1/projects/999999999/workflows?per_page=1000");
    expect({ code: missing.status, body: missing.body }).toEqual({ code: 404, body: { message: expect.any(String) } });
    const limited = await addMemberWithKey(stack, owner, "viewer", [emptyProject]);
    const refused = await apiClient(stack.baseUrl, limited.token).get(`/v1/projects/${owner.projectId}/workflows?page=0`);
    expect({ code: refused.status, keys: Object.keys(refused.body) }).toEqual({ code: 403, keys: ["message"] });
  });
});

describe("4.3, 4.4, 7: error bodies are exactly the spec's shapes; the request id is in X-Request-Id only", () => {
  test("every error shape has only its fields, and the answer names the request in its header", async () => {
    const ownId = "support-case-0001";
    const notFound = await api.get("/v1/articles/999999999", { headers: { "x-request-id": ownId } });
    expect({ code: notFound.status, body: notFound.body, id: notFound.headers.get("x-request-id") }).toEqual({ code: 404, body: { message: "Article not found." }, id: ownId });

    const invalid = await api.post("/v1/articles", articleBody(owner.projectId, { title: "x" }));
    expect({ code: invalid.status, keys: Object.keys(invalid.body).sort() }).toEqual({ code: 422, keys: ["errors", "message"] });
    expect(invalid.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);

    const unauthenticated = await apiClient(stack.baseUrl, "not-a-key").get("/v1/articles");
    expect({ code: unauthenticated.status, body: unauthenticated.body }).toEqual({ code: 401, body: { error: "Unauthenticated", message: "Unauthenticated.", code: "UNAUTHENTICATED" } });
    expect(unauthenticated.headers.get("x-request-id")).toBeTruthy();

    const unsubscribed = await createTenant(stack, { subscribed: false });
    const unpaid = await apiClient(stack.baseUrl, unsubscribed.token).get("/v1/articles");
    expect({ code: unpaid.status, keys: Object.keys(unpaid.body).sort() }).toEqual({ code: 402, keys: ["code", "error", "message"] });

    const limitedTenant = await createTenant(stack, { perMinute: 1 });
    const limitedApi = apiClient(stack.baseUrl, limitedTenant.token);
    await limitedApi.get("/v1/articles");
    const limited = await limitedApi.get("/v1/articles");
    expect({ code: limited.status, keys: Object.keys(limited.body).sort() }).toEqual({ code: 429, keys: ["code", "error", "message", "retry_after"] });

    const foreignStep = (await apiClient(stack.baseUrl, stranger.token).post(`/v1/projects/${stranger.projectId}/workflows`, stepBody())).body.data;
    const reorder = await api.post(`/v1/projects/${owner.projectId}/workflows/reorder`, { steps: [{ id: foreignStep.id, step_number: 2 }] });
    expect({ code: reorder.status, keys: Object.keys(reorder.body).sort() }).toEqual({ code: 422, keys: ["message", "success"] });

    const viewer = await addMemberWithKey(stack, owner, "viewer", [owner.projectId]);
    const forbidden = await apiClient(stack.baseUrl, viewer.token).post(`/v1/projects/${owner.projectId}/workflows`, stepBody({ article_type: "not_allowed" }));
    expect({ code: forbidden.status, keys: Object.keys(forbidden.body) }).toEqual({ code: 403, keys: ["message"] });
  });
});

describe("4.3 an identifier that is a number, leading zeros included, or a UUID is looked up", () => {
  test("/v1/articles/00{id} is the article; anything else is 404 with a message only", async () => {
    const article = created[0];
    const byId = await api.get(`/v1/articles/${article.id}`);
    for (const identifier of [`0${article.id}`, `00${article.id}`, `${"0".repeat(30)}${article.id}`, article.external_id.toUpperCase()]) {
      const res = await api.get(`/v1/articles/${identifier}`);
      expect({ identifier, code: res.status, body: res.body }).toEqual({ identifier, code: 200, body: byId.body });
    }
    expect((await api.get(`/v1/articles/00${article.id}/steps`)).status).toBe(200);
    for (const junk of ["0x1", "+1", "1.0", " 1", "1e2"]) {
      const res = await api.get(`/v1/articles/${encodeURIComponent(junk)}`);
      expect({ junk, code: res.status, body: res.body }).toEqual({ junk, code: 404, body: { message: "Article not found." } });
    }
    // Project and step ids in paths read the same way.
    expect((await api.get(`/v1/projects/000${owner.projectId}/workflows`)).status).toBe(200);

    const reply = await grpcArticles.getArticle({ id: `00${article.id}` }, keyed(owner.token));
    expect(reply.article?.externalId).toBe(article.external_id);
    expect((await grpcRefusal(grpcArticles.getArticle({ id: "1.0" }, keyed(owner.token)))).code).toBe(Code.NotFound);
  });
});

describe("4.7, 2.3, 9: an update changes only what it names", () => {
  async function workflowOf(articleType: string) {
    const res = await api.get(`/v1/projects/${owner.projectId}/workflows?article_type=${articleType}`);
    return res.body.data[0];
  }

  test("output_format off json keeps json_schema, and the step uses it again back on json", async () => {
    const base = `/v1/projects/${owner.projectId}/workflows`;
    const step = (await api.post(base, stepBody({ article_type: "kept_schema", output_format: "json", json_schema: OUTLINE_SCHEMA }))).body.data;
    const toText = await api.patch(`${base}/${step.id}`, { output_format: "text" });
    expect({ code: toText.status, format: toText.body.data.output_format, schema: toText.body.data.json_schema }).toEqual({ code: 200, format: "text", schema: OUTLINE_SCHEMA });
    const back = await api.put(`${base}/${step.id}`, { output_format: "json" });
    expect({ format: back.body.data.output_format, schema: back.body.data.json_schema }).toEqual({ format: "json", schema: OUTLINE_SCHEMA });

    // gRPC: the same through UpdateWorkflowStep.
    const changed = await grpcWorkflows.updateWorkflowStep({ projectId: BigInt(owner.projectId), stepId: BigInt(step.id), changes: { outputFormat: "markdown" } }, keyed(owner.token));
    expect({ format: changed.step?.outputFormat, schema: changed.step?.jsonSchema }).toEqual({ format: "markdown", schema: OUTLINE_SCHEMA });
  });

  test("a PATCH or PUT that changes nothing leaves revision and updated_at as they were", async () => {
    const base = `/v1/projects/${owner.projectId}/workflows`;
    const step = (await api.post(base, stepBody({ article_type: "unchanged_steps", step_name: "Outline", output_format: "json", json_schema: OUTLINE_SCHEMA }))).body.data;
    const before = await workflowOf("unchanged_steps");
    const noChanges: [string, Record<string, unknown>][] = [
      ["PATCH", {}],
      ["PUT", {}],
      ["PATCH", { step_name: "Outline", output_format: "json" }],
      // The same schema with its keys in another order is the same schema.
      ["PUT", { json_schema: { additionalProperties: false, required: ["headings"], properties: OUTLINE_SCHEMA.properties, type: "object" } }],
    ];
    for (const [verb, body] of noChanges) {
      const res = verb === "PUT" ? await api.put(`${base}/${step.id}`, body) : await api.patch(`${base}/${step.id}`, body);
      expect({ verb, body, code: res.status, step: res.body.data }).toEqual({ verb, body, code: 200, step });
    }
    const reply = await grpcWorkflows.updateWorkflowStep({ projectId: BigInt(owner.projectId), stepId: BigInt(step.id), changes: {} }, keyed(owner.token));
    expect({ name: reply.step?.stepName, updated_at: timestampDate(reply.step!.updatedAt!).toISOString() }).toEqual({ name: "Outline", updated_at: step.updated_at });
    const after = await workflowOf("unchanged_steps");
    expect({ revision: after.revision, updated_at: after.updated_at, step: after.steps[0] }).toEqual({ revision: before.revision, updated_at: before.updated_at, step });

    // A real change still moves both.
    const renamed = await api.patch(`${base}/${step.id}`, { step_name: "Headings" });
    expect(renamed.body.data.updated_at > step.updated_at).toBe(true);
    expect((await workflowOf("unchanged_steps")).revision).toBe(before.revision + 1);
  });
});
