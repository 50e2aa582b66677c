// The article list's cursor (GET /v1/articles?cursor=, meta.next_cursor; ListArticles' cursor on
// the public gRPC API): walking a project of thousands of articles by cursors, with the typed
// client's pager, lists every article exactly once, newest first, while articles are created
// through the API and stored amid the walk; meta keeps the spec's four integers; a cursor this
// list did not give (malformed, of another status, project or account) is 422 on `cursor`.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as grpc from "@grpc/grpc-js";
import postgres from "postgres";
import { articlePages, createArticleClient, listArticles, listedArticles, ValidationFailed } from "../../clients/typescript/src/index.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { closeClients, publicClients, type PublicClients } from "../harness/public-grpc.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createProject, createTenant, type Tenant } from "../harness/tenants.ts";
import { createArticle } from "../harness/articles.ts";
import { eventually } from "../harness/eventually.ts";
import { articleBody } from "./generation-support.ts";
import { fillArchive, holdGeneration, type GenerationHold } from "./articles-fixtures.ts";

const ARCHIVE = 2_000;
const SIDE = 300;

let stack: TestStack;
let tenant: Tenant;
let api: ApiClient;
let archive: number;
let sql: postgres.Sql;
let hold: GenerationHold;
let grpcClients: PublicClients;

beforeAll(async () => {
  stack = await useStack();
  // Created articles wait in the queue: the walk is about the list, not their generation.
  hold = await holdGeneration(stack);
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
  archive = await createProject(stack, tenant.accountId, "Cursor archive");
  sql = postgres(stack.databaseUrl, { max: 2, onnotice: () => {} });
  await fillArchive(sql, tenant.accountId, archive, ARCHIVE, "2025-05-01 00:00:00+00");
  await fillArchive(sql, tenant.accountId, tenant.projectId, SIDE, "2025-05-02 03:00:00+00");
  grpcClients = publicClients(Number(new URL(stack.publicGrpcUrl).port));
});

afterAll(async () => {
  closeClients(grpcClients);
  await hold?.release();
  await sql?.end();
});

/** The list's ids in its order, as Postgres orders the rows themselves. */
async function ordered(projectIds: number[], status: string | null): Promise<number[]> {
  const rows = await sql`
    select id from article_store.articles where project_id in ${sql(projectIds)} and (${status}::text is null or status = ${status})
    order by created_at desc, id desc`;
  return rows.map((r) => Number(r.id));
}

const idsOf = (body: { data: { id: number }[] }) => body.data.map((a) => a.id);

describe("walking by cursor", () => {
  test("every article of a project exactly once, newest first, while articles are created and stored amid the walk", async () => {
    const before = await ordered([archive], null);
    const client = createArticleClient({ baseUrl: stack.baseUrl, apiKey: tenant.token });
    const seen: number[] = [];
    const metas: { current_page: number; last_page: number; per_page: number; total: number; next_cursor: string | null }[] = [];
    let pages = 0;
    for await (const page of articlePages(client, { project_id: archive, per_page: 40 })) {
      seen.push(...page.articles.map((a) => a.id));
      metas.push(page.meta);
      // Between pages: one article created through the API (the newest of all, above every page
      // left), and two stored at times amid the pages still to come.
      if (++pages % 5 === 0) {
        await createArticle(api, articleBody(archive, { title: `Created during the walk ${pages}` }));
        await fillArchive(sql, tenant.accountId, archive, 2, `2025-05-0${1 + (pages % 9)} 01:00:00+00`);
      }
    }
    // Nothing twice, nothing that existed before the walk left out, and in the list's order.
    expect(new Set(seen).size).toBe(seen.length);
    expect(before.filter((id) => !seen.includes(id))).toEqual([]);
    const after = await ordered([archive], null);
    expect(seen).toEqual(after.filter((id) => seen.includes(id)));
    // The created ones are newer than every page read after them: none is listed.
    const created = await sql`select id from article_store.articles where project_id = ${archive} and title like 'Created during the walk%'`;
    expect(created.length).toBeGreaterThan(0);
    expect(created.filter((r) => seen.includes(Number(r.id)))).toEqual([]);

    // meta: the spec's four integers, current_page counting the pages walked, a cursor to each next page.
    metas.forEach((meta, i) => {
      expect(meta.current_page).toBe(i + 1);
      expect(meta.per_page).toBe(40);
      expect(Number.isInteger(meta.total) && meta.total >= ARCHIVE).toBe(true);
      expect(meta.last_page).toBe(Math.ceil(meta.total / 40));
      expect(typeof meta.next_cursor === "string").toBe(i < metas.length - 1);
    });
    expect(metas.at(-1)!.next_cursor).toBeNull();
  }, 60_000);

  test("with a status filter across every project of the caller, exactly the list's order", async () => {
    const client = createArticleClient({ baseUrl: stack.baseUrl, apiKey: tenant.token });
    const walked: number[] = [];
    for await (const article of listedArticles(client, { status: "failed", per_page: 33 })) {
      expect(article.status).toBe("failed");
      walked.push(article.id);
    }
    expect(walked).toEqual(await ordered([archive, tenant.projectId], "failed"));
  }, 30_000);

  test("articles stored to the microsecond (before created_at was kept to the millisecond) are walked exactly too", async () => {
    const project = await createProject(stack, tenant.accountId, "Microseconds");
    await fillArchive(sql, tenant.accountId, project, 12, "2025-01-01 00:00:00+00");
    // Twelve times within one millisecond, in an order their ids do not follow.
    await sql`update article_store.articles set created_at = '2025-01-01 00:00:00.000100+00'::timestamptz + ((id * 7) % 12) * interval '70 microseconds' where project_id = ${project}`;
    // The caller's projects are remembered for up to a second: the new one is listed once it is seen.
    await eventually(() => api.get(`/v1/articles?project_id=${project}&per_page=1`), (res) => res.body.meta?.total === 12, 10_000, "the new project to be listed");
    const client = createArticleClient({ baseUrl: stack.baseUrl, apiKey: tenant.token });
    const walked: number[] = [];
    for await (const page of articlePages(client, { project_id: project, per_page: 2 })) walked.push(...page.articles.map((a) => a.id));
    expect(walked).toEqual(await ordered([project], null));
  });

  test("a numbered page's next_cursor reads the next numbered page; the last page has none; an empty cursor is page 1", async () => {
    const query = `project_id=${archive}&status=completed&per_page=25`;
    const third = (await api.get(`/v1/articles?${query}&page=3`)).body;
    const fourth = (await api.get(`/v1/articles?${query}&page=4`)).body;
    const next = await api.get(`/v1/articles?${query}&cursor=${third.meta.next_cursor}`);
    expect(next.status).toBe(200);
    expect(idsOf(next.body)).toEqual(idsOf(fourth));
    expect(next.body.meta).toEqual({ ...fourth.meta, next_cursor: next.body.meta.next_cursor });
    expect(next.body.meta.current_page).toBe(4);

    const last = (await api.get(`/v1/articles?${query}&page=${third.meta.last_page}`)).body;
    expect(last.meta.next_cursor).toBeNull();
    const beyond = (await api.get(`/v1/articles?${query}&page=${third.meta.last_page + 1}`)).body;
    expect(beyond).toMatchObject({ data: [], meta: { next_cursor: null } });

    const first = (await api.get(`/v1/articles?${query}&cursor=`)).body;
    expect(idsOf(first)).toEqual(idsOf((await api.get(`/v1/articles?${query}`)).body));
    expect(first.meta.current_page).toBe(1);
  });
});

describe("cursors this list did not give", () => {
  const expectCursorRefused = (res: { status: number; body: any }) => {
    expect(res.status).toBe(422);
    expect(Object.keys(res.body).sort()).toEqual(["errors", "message"]);
    expect(Object.keys(res.body.errors)).toEqual(["cursor"]);
    expect(res.body.message).toBe(res.body.errors.cursor[0]);
  };

  test("malformed: not base64url, not a cursor inside, a broken number, a bad escape", async () => {
    const own = (await api.get(`/v1/articles?project_id=${archive}&per_page=5`)).body.meta.next_cursor as string;
    const forged = Buffer.from(Buffer.from(own, "base64url").toString().replace(/\.(\d+)\./, ".1e9.")).toString("base64url");
    const cursors = ["not a cursor", "abc", Buffer.from("c1.1.2").toString("base64url"), forged, own.slice(0, -3)].map(encodeURIComponent);
    // `%ZZ` is an escape that does not decode: refused too, not read as no cursor.
    for (const cursor of [...cursors, "%ZZ"]) expectCursorRefused(await api.get(`/v1/articles?project_id=${archive}&cursor=${cursor}`));
  });

  test("given for another status, another project or another account", async () => {
    const own = (await api.get(`/v1/articles?project_id=${archive}&per_page=5`)).body.meta.next_cursor as string;
    const refusals = [
      await api.get(`/v1/articles?project_id=${archive}&status=completed&cursor=${own}`),
      await api.get(`/v1/articles?project_id=${tenant.projectId}&cursor=${own}`),
      await api.get(`/v1/articles?cursor=${own}`),
    ];
    const stranger = await createTenant(stack);
    refusals.push(await apiClient(stack.baseUrl, stranger.token).get(`/v1/articles?project_id=${archive}&cursor=${own}`));
    for (const res of refusals) {
      expectCursorRefused(res);
      expect(res.body.errors.cursor[0]).toContain("another list");
    }
    // The typed client raises it as the validation failure it is.
    const { error } = await listArticles({ client: createArticleClient({ baseUrl: stack.baseUrl, apiKey: stranger.token }), query: { project_id: archive, cursor: own } });
    expect(error).toBeInstanceOf(ValidationFailed);
  });
});

describe("on the public gRPC API", () => {
  const call = (request: object) =>
    new Promise<any>((resolve, reject) => {
      const metadata = new grpc.Metadata();
      metadata.set("authorization", `Bearer ${tenant.token}`);
      grpcClients.ArticleService.ListArticles(request, metadata, { deadline: Date.now() + 10_000 }, (error: grpc.ServiceError | null, reply: any) => (error ? reject(error) : resolve(reply)));
    });

  test("ListArticles walks by cursor as /v1 does, and refuses a foreign cursor on `cursor`", async () => {
    const walked: number[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const reply = await call({ project_id: String(tenant.projectId), status: "completed", per_page: 50, ...(cursor ? { cursor } : {}) });
      walked.push(...reply.articles.map((a: { id: string }) => Number(a.id)));
      expect(reply.meta.current_page).toBe(++pages);
      cursor = reply.meta.next_cursor;
    } while (cursor);
    expect(walked).toEqual(await ordered([tenant.projectId], "completed"));

    const httpCursor = (await api.get(`/v1/articles?project_id=${tenant.projectId}&status=completed&per_page=50`)).body.meta.next_cursor;
    const second = await call({ project_id: String(tenant.projectId), status: "completed", per_page: 50, cursor: httpCursor });
    expect(second.articles.map((a: { id: string }) => Number(a.id))).toEqual(walked.slice(50, 100));

    const refused = await call({ project_id: String(archive), cursor: httpCursor }).then(
      () => undefined,
      (error: grpc.ServiceError) => error,
    );
    expect(refused?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(refused?.details).toContain("another list");
  });
});
