// GET /v1/articles and GET /v1/articles/{id} (spec 4.2, 4.3, 5.6, 5.7): by numeric id or
// external_id; 404 with only a message for junk, missing and other accounts' articles; 403 for a
// project the caller cannot view; lists newest first with filters, pagination and integer meta.
// What a list does with values the spec does not list is in spec-contract-rows.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Role } from "../../proto/gen/articles/accounts_billing/v1/operator_pb.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { addMemberWithKey, createProject, createTenant, operatorClient, type Tenant } from "../harness/tenants.ts";
import { articleBody } from "../harness/articles.ts";
import { lifecycleClient } from "../harness/service-clients.ts";
import { holdGeneration, type GenerationHold } from "./articles-fixtures.ts";

let stack: TestStack;
let hold: GenerationHold;
let tenant: Tenant;
let api: ApiClient;

beforeAll(async () => {
  stack = await useStack();
  hold = await holdGeneration(stack);
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
});

afterAll(async () => {
  await hold.release();
});

async function create(client: ApiClient, projectId: number, overrides: Record<string, unknown> = {}) {
  const res = await client.post("/v1/articles", articleBody(projectId, overrides));
  expect(res.status).toBe(201);
  return res.body.data;
}

function expectPlainNotFound(res: { status: number; body: unknown }) {
  expect(res.status).toBe(404);
  expect(Object.keys(res.body as object)).toEqual(["message"]);
}

describe("GET /v1/articles/{id}", () => {
  test("by numeric id and by external_id, in the envelope and the creation shape", async () => {
    const created = await create(api, tenant.projectId, { keywords: "a,b" });
    const byId = await api.get(`/v1/articles/${created.id}`);
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual({ success: true, data: created });
    const byUuid = await api.get(`/v1/articles/${created.external_id}`);
    expect(byUuid.body.data).toEqual(created);
    const upper = await api.get(`/v1/articles/${created.external_id.toUpperCase()}`);
    expect(upper.body.data.id).toBe(created.id);
  });

  test("an identifier that is neither a number nor a UUID is 404 with only a message", async () => {
    for (const junk of ["abc", "12abc", "-1", "1.5", "1e3", "00000000-0000-0000-0000-00000000000g", "%20"]) {
      expectPlainNotFound(await api.get(`/v1/articles/${junk}`));
    }
  });

  test("a missing article is 404", async () => {
    expectPlainNotFound(await api.get("/v1/articles/999999999"));
    expectPlainNotFound(await api.get("/v1/articles/0"));
    expectPlainNotFound(await api.get(`/v1/articles/${crypto.randomUUID()}`));
  });

  test("another account's article is 404, never 403", async () => {
    const stranger = await createTenant(stack);
    const theirs = await create(apiClient(stack.baseUrl, stranger.token), stranger.projectId);
    expectPlainNotFound(await api.get(`/v1/articles/${theirs.id}`));
    expectPlainNotFound(await api.get(`/v1/articles/${theirs.external_id}`));
  });

  test("a member who cannot view the article's project gets 403; a viewer reads it", async () => {
    const article = await create(api, tenant.projectId);
    const elsewhere = await createProject(stack, tenant.accountId, "Elsewhere");
    const limited = await addMemberWithKey(stack, tenant, "viewer", [elsewhere]);
    const res = await apiClient(stack.baseUrl, limited.token).get(`/v1/articles/${article.id}`);
    expect(res.status).toBe(403);
    expect(Object.keys(res.body)).toEqual(["message"]);
    const viewer = await addMemberWithKey(stack, tenant, "viewer");
    expect((await apiClient(stack.baseUrl, viewer.token).get(`/v1/articles/${article.id}`)).status).toBe(200);
  });

  test("a completed article carries its content; updated_at advances with progress", async () => {
    const article = await create(api, tenant.projectId);
    const lifecycle = lifecycleClient(stack);
    await lifecycle.recordProgress({ externalId: article.external_id, status: "writing", currentStep: "Draft" });
    const writing = (await api.get(`/v1/articles/${article.id}`)).body.data;
    expect(writing).toMatchObject({ status: "writing", current_step: "Draft" });
    expect(Date.parse(writing.updated_at)).toBeGreaterThan(Date.parse(article.updated_at));
    await lifecycle.completeGeneration({ externalId: article.external_id, content: "Final body", actualWordCount: 2, aiModelUsed: "simulator:sim-fast", cost: "0.25" });
    expect((await api.get(`/v1/articles/${article.id}`)).body.data).toMatchObject({ status: "completed", content: "Final body", original_content: "Final body", actual_word_count: 2, cost: "0.25" });
  });
});

describe("GET /v1/articles", () => {
  test("an empty result is 200 with data [] and integer meta", async () => {
    const empty = await createTenant(stack);
    const res = await apiClient(stack.baseUrl, empty.token).get("/v1/articles");
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, data: [], meta: { current_page: 1, last_page: 1, per_page: 20, total: 0, next_cursor: null } });
  });

  test("newest first, paginated, with meta", async () => {
    const own = await createTenant(stack);
    const client = apiClient(stack.baseUrl, own.token);
    const titles = ["First article", "Second article", "Third article", "Fourth article", "Fifth article"];
    for (const title of titles) await create(client, own.projectId, { title });

    const page1 = await client.get("/v1/articles?per_page=2");
    expect(page1.status).toBe(200);
    expect(page1.body.data.map((a: { title: string }) => a.title)).toEqual(["Fifth article", "Fourth article"]);
    expect(page1.body.meta).toEqual({ current_page: 1, last_page: 3, per_page: 2, total: 5, next_cursor: expect.any(String) });
    const page3 = await client.get("/v1/articles?per_page=2&page=3");
    expect(page3.body.data.map((a: { title: string }) => a.title)).toEqual(["First article"]);
    const beyond = await client.get("/v1/articles?per_page=2&page=9");
    expect(beyond.body.data).toEqual([]);
    expect(beyond.body.meta).toEqual({ current_page: 9, last_page: 3, per_page: 2, total: 5, next_cursor: null });
    expect(page1.body.data[0]).toEqual((await client.get(`/v1/articles/${page1.body.data[0].id}`)).body.data);
  });

  test("status and project_id filters; completed entries carry their content", async () => {
    const own = await createTenant(stack);
    const client = apiClient(stack.baseUrl, own.token);
    const second = await createProject(stack, own.accountId, "Second project");
    const a = await create(client, own.projectId, { title: "In the first project" });
    const b = await create(client, second, { title: "In the second project" });
    await lifecycleClient(stack).completeGeneration({ externalId: b.external_id, content: "Done body", actualWordCount: 2, aiModelUsed: "simulator:sim-fast", cost: "0" });

    const completed = await client.get("/v1/articles?status=completed");
    expect(completed.body.data.map((x: { id: number }) => x.id)).toEqual([b.id]);
    expect(completed.body.data[0]).toMatchObject({ content: "Done body", project: { id: second, name: "Second project" } });
    const queued = await client.get("/v1/articles?status=queued");
    expect(queued.body.data.map((x: { id: number }) => x.id)).toEqual([a.id]);
    const inFirst = await client.get(`/v1/articles?project_id=${own.projectId}`);
    expect(inFirst.body.data.map((x: { id: number }) => x.id)).toEqual([a.id]);
    expect(inFirst.body.meta.total).toBe(1);
    const both = await client.get("/v1/articles");
    expect(both.body.data.map((x: { id: number }) => x.id)).toEqual([b.id, a.id]);
  });

  test("without project_id: every viewable project on every account the user belongs to", async () => {
    const mine = await createTenant(stack);
    const theirs = await createTenant(stack);
    const stranger = await createTenant(stack);
    await operatorClient(stack).addMember({ accountId: BigInt(theirs.accountId), userId: BigInt(mine.userId), role: Role.VIEWER });
    const inMine = await create(apiClient(stack.baseUrl, mine.token), mine.projectId);
    const inTheirs = await create(apiClient(stack.baseUrl, theirs.token), theirs.projectId);
    await create(apiClient(stack.baseUrl, stranger.token), stranger.projectId);
    const res = await apiClient(stack.baseUrl, mine.token).get("/v1/articles");
    expect(res.body.data.map((x: { id: number }) => x.id)).toEqual([inTheirs.id, inMine.id]);
  });

  test("a member limited to some projects lists only those", async () => {
    const own = await createTenant(stack);
    const client = apiClient(stack.baseUrl, own.token);
    const open = await createProject(stack, own.accountId, "Open");
    const visible = await create(client, open);
    await create(client, own.projectId);
    const limited = await addMemberWithKey(stack, own, "viewer", [open]);
    const res = await apiClient(stack.baseUrl, limited.token).get("/v1/articles");
    expect(res.body.data.map((x: { id: number }) => x.id)).toEqual([visible.id]);
    // A project of the account they cannot view restricts to nothing, as an empty one does.
    const outOfReach = await apiClient(stack.baseUrl, limited.token).get(`/v1/articles?project_id=${own.projectId}`);
    expect(outOfReach.status).toBe(200);
    expect(outOfReach.body).toEqual({ success: true, data: [], meta: { current_page: 1, last_page: 1, per_page: 20, total: 0, next_cursor: null } });
  });

  test("reads need a key and share the articles limit", async () => {
    expect((await apiClient(stack.baseUrl).get("/v1/articles")).status).toBe(401);
    const res = await api.get("/v1/articles");
    expect(res.headers.get("ratelimit-remaining")).not.toBeNull();
  });
});
