// GET /v1/articles totals and paging (spec 4.2): meta.total and last_page stay exact per project
// and per status filter as articles are created, complete and fail (before and after article-store
// folds the recorded count changes), and pages list every article once, newest first and stable
// by id, also deep into large projects.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createProject, createTenant, type Tenant } from "../harness/tenants.ts";
import { createArticle } from "../harness/articles.ts";
import { eventually } from "../harness/eventually.ts";
import { articleBody, createWorkflow, finished, marker, waitForArticle } from "./generation-support.ts";
import { fillArchive } from "./articles-fixtures.ts";

let stack: TestStack;
let tenant: Tenant;
let api: ApiClient;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
});

interface Listed {
  id: number;
  status: string;
  created_at: string;
}

/** A page's meta.next_cursor: a cursor on every page before the last, none from the last on. */
const nextCursor = (page: number, lastPage: number) => (page < lastPage ? expect.any(String) : null);

/** Every page of a list (per_page `perPage`), checking each page's meta against the first. */
async function everyPage(client: ApiClient, query: string, perPage: number): Promise<{ articles: Listed[]; total: number }> {
  const first = await client.get(`/v1/articles?${query}&per_page=${perPage}`);
  expect(first.status).toBe(200);
  const { total, last_page } = first.body.meta;
  expect(last_page).toBe(Math.max(1, Math.ceil(total / perPage)));
  const articles: Listed[] = [...first.body.data];
  for (let page = 2; page <= last_page; page++) {
    const res = await client.get(`/v1/articles?${query}&per_page=${perPage}&page=${page}`);
    expect(res.body.meta).toEqual({ current_page: page, last_page, per_page: perPage, total, next_cursor: nextCursor(page, last_page) });
    articles.push(...res.body.data);
  }
  return { articles, total };
}

/** Newest first by created_at, then by id among equal times. */
const newestFirst = (a: Listed, b: Listed) => Date.parse(b.created_at) - Date.parse(a.created_at) || b.id - a.id;

async function expectTotal(client: ApiClient, query: string, expected: number, perPage = 2) {
  const res = await client.get(`/v1/articles?${query}&per_page=${perPage}`);
  expect(res.status).toBe(200);
  expect(res.body.meta).toMatchObject({ total: expected, last_page: Math.max(1, Math.ceil(expected / perPage)) });
}

describe("totals follow creations and status changes", () => {
  test("per project and per status, across pages, after articles complete and fail", async () => {
    const own = await createTenant(stack);
    const client = apiClient(stack.baseUrl, own.token);
    const second = await createProject(stack, own.accountId, "Second project");
    const quick = marker("quick");
    const failing = marker("failing");
    await createWorkflow(client, own.projectId, quick, [{ user: `[[sim:echo]]done ${quick}` }]);
    await createWorkflow(client, own.projectId, failing, [{ user: `[[sim:fail]] always ${failing}` }]);
    await createWorkflow(client, second, quick, [{ user: `[[sim:echo]]done ${quick}` }]);

    const created: number[] = [];
    for (let i = 0; i < 5; i++) created.push((await createArticle(client, articleBody(own.projectId, { article_type: quick, title: `Quick ${i}` }))).id);
    for (let i = 0; i < 2; i++) created.push((await createArticle(client, articleBody(own.projectId, { article_type: failing, title: `Failing ${i}` }))).id);
    for (let i = 0; i < 3; i++) created.push((await createArticle(client, articleBody(second, { article_type: quick, title: `Second ${i}` }))).id);

    // Right after creation, whatever the articles' progress, each project holds what it was given.
    await expectTotal(client, `project_id=${own.projectId}`, 7);
    await expectTotal(client, `project_id=${second}`, 3);
    await expectTotal(client, "status=published", 0);

    const done = await Promise.all(created.map((id) => waitForArticle(client, id, finished, 60_000)));
    const statusOf = new Map(done.map((a) => [a.id as number, a.status as string]));
    expect(done.filter((a) => a.status === "failed").length).toBe(2);

    for (const projectId of [own.projectId, second, undefined]) {
      const inScope = done.filter((a) => projectId === undefined || a.project.id === projectId);
      const scope = projectId === undefined ? "" : `project_id=${projectId}&`;
      const all = await everyPage(client, `${scope}page=1`, 3);
      expect(all.total).toBe(inScope.length);
      expect(all.articles.map((a) => a.id).sort()).toEqual(inScope.map((a) => a.id).sort());
      for (const status of ["queued", "writing", "polishing", "completed", "published", "failed"]) {
        const expected = inScope.filter((a) => a.status === status).length;
        const listed = await everyPage(client, `${scope}status=${status}`, 2);
        expect({ status, total: listed.total }).toEqual({ status, total: expected });
        expect(listed.articles.every((a) => statusOf.get(a.id) === status)).toBe(true);
        expect(listed.articles.length).toBe(expected);
      }
    }
  }, 90_000);
});

describe("paging", () => {
  test("newest first and stable by id; every article on exactly one page", async () => {
    const own = await createTenant(stack);
    const client = apiClient(stack.baseUrl, own.token);
    const other = await createProject(stack, own.accountId, "Other project");
    // Created side by side in both projects, so times interleave across the two.
    await Promise.all(Array.from({ length: 9 }, (_, i) => createArticle(client, articleBody(i % 3 === 0 ? other : own.projectId, { title: `Article ${i}` }))));

    const whole = (await client.get("/v1/articles?per_page=100")).body;
    expect(whole.meta.total).toBe(9);
    expect(whole.data.map((a: Listed) => a.id)).toEqual([...whole.data].sort(newestFirst).map((a: Listed) => a.id));
    for (const perPage of [1, 2, 4, 9]) {
      const paged = await everyPage(client, "page=1", perPage);
      expect(paged.articles.map((a) => a.id)).toEqual(whole.data.map((a: Listed) => a.id));
    }
    const beyond = await client.get("/v1/articles?per_page=4&page=4");
    expect(beyond.body).toMatchObject({ data: [], meta: { current_page: 4, last_page: 3, per_page: 4, total: 9 } });
  });

  describe("projects of thousands of articles", () => {
    // Creating thousands through the API would take minutes: the projects are filled in their
    // database with times that tie, fall on midnight and span days, so deep pages cross day bounds.
    const ARCHIVE = 6_000;
    const SIDE = 900;
    let archive: number;
    let sql: postgres.Sql;

    const fill = (projectId: number, articles: number, start: string) => fillArchive(sql, tenant.accountId, projectId, articles, start);

    beforeAll(async () => {
      archive = await createProject(stack, tenant.accountId, "Archive");
      sql = postgres(stack.databaseUrl, { max: 2, onnotice: () => {} });
      await fill(archive, ARCHIVE, "2025-03-01 00:00:00+00");
      await fill(tenant.projectId, SIDE, "2025-03-04 03:00:00+00");
    });

    afterAll(async () => {
      await sql.end();
    });

    /** The page as an OFFSET over the whole ordered list would give it. */
    async function expected(projectIds: number[], status: string | null, page: number, perPage: number): Promise<number[]> {
      const rows = await sql`
        select id from article_store.articles where project_id in ${sql(projectIds)} and (${status}::text is null or status = ${status})
        order by created_at desc, id desc limit ${perPage} offset ${(page - 1) * perPage}`;
      return rows.map((r) => Number(r.id));
    }

    test("deep pages, with and without a status filter, one project or several, are exactly the pages of the whole ordered list", async () => {
      const scopes = [
        { query: `project_id=${archive}&`, projectIds: [archive], articles: ARCHIVE },
        { query: "", projectIds: [archive, tenant.projectId], articles: ARCHIVE + SIDE },
      ];
      for (const scope of scopes) {
        // Statuses cycle completed, completed, failed, published from the first article (g = 1).
        for (const [status, total] of [[null, scope.articles], ["completed", scope.articles / 2], ["failed", scope.articles / 4]] as const) {
          const filter = status ? `status=${status}&` : "";
          for (const perPage of [7, 20, 100]) {
            const lastPage = Math.ceil(total / perPage);
            const deep = Math.floor(2000 / perPage);
            for (const page of new Set([1, 2, deep, deep + 1, deep + 2, lastPage - 1, lastPage, lastPage + 1])) {
              const res = await api.get(`/v1/articles?${scope.query}${filter}per_page=${perPage}&page=${page}`);
              expect(res.body.meta).toEqual({ current_page: page, last_page: lastPage, per_page: perPage, total, next_cursor: nextCursor(page, lastPage) });
              const ids = res.body.data.map((a: Listed) => a.id);
              expect({ status, perPage, page, ids }).toEqual({ status, perPage, page, ids: await expected(scope.projectIds, status, page, perPage) });
            }
          }
        }
      }
    });

    test("totals follow a status change deep in a project", async () => {
      const [oldest] = await sql`select id from article_store.articles where project_id = ${archive} and status = 'failed' order by created_at, id limit 1`;
      await sql`update article_store.articles set status = 'completed' where id = ${oldest.id}`;
      await expectTotal(api, `project_id=${archive}&status=failed`, ARCHIVE / 4 - 1, 20);
      await expectTotal(api, `project_id=${archive}&status=completed`, ARCHIVE / 2 + 1, 20);
      await expectTotal(api, `project_id=${archive}`, ARCHIVE, 20);
      const lastPage = Math.ceil((ARCHIVE / 4 - 1) / 20);
      const res = await api.get(`/v1/articles?project_id=${archive}&status=failed&per_page=20&page=${lastPage}`);
      expect(res.body.data.map((a: Listed) => a.id)).toEqual(await expected([archive], "failed", lastPage, 20));
    });

    test("totals and deep pages stay exact once the recorded count changes are folded into the counts", async () => {
      const [newest] = await sql`select id from article_store.articles where project_id = ${archive} and status = 'published' order by created_at desc, id desc limit 1`;
      await sql`update article_store.articles set status = 'failed' where id = ${newest.id}`;
      const unfolded = () => sql`select count(*)::int as n from article_store.article_count_changes where project_id = ${archive}`.then(([r]) => r.n as number);
      expect(await unfolded()).toBeGreaterThan(0);
      await eventually(unfolded, (n) => n === 0, 10_000, "article-store to fold the archive's count changes");
      await expectTotal(api, `project_id=${archive}&status=failed`, ARCHIVE / 4, 20);
      await expectTotal(api, `project_id=${archive}&status=published`, ARCHIVE / 4 - 1, 20);
      await expectTotal(api, `project_id=${archive}`, ARCHIVE, 20);
      const deep = Math.floor(2000 / 20) + 1;
      const res = await api.get(`/v1/articles?project_id=${archive}&status=completed&per_page=20&page=${deep}`);
      expect(res.body.data.map((a: Listed) => a.id)).toEqual(await expected([archive], "completed", deep, 20));
    });
  });
});
