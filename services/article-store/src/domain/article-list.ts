// Lists of articles of some projects, newest first (created_at, then id), by page or after a place
// in that order (a cursor). Neither part grows with the projects' size: the total sums the
// per-status counts (with the changes not folded into them yet, read in the same snapshot), and a
// page's ids come from an index-only walk that starts at the day the page falls in, found from the
// per-day counts, or at the place itself, before only those rows are read.
import { and, eq, sql, type SQL } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { preparedPerDatabase } from "../../../kit/src/prepared-statements.ts";
import { articleCountChanges, articleCounts, articleDayCounts, articles } from "../db/schema.ts";
import { pageWindow } from "../../../kit/src/rules/page-window.ts";
import type { ArticleRecord } from "./articles.ts";

export interface ArticleListQuery {
  projectIds: number[];
  status?: string;
  page: number;
  perPage: number;
  /** Keyset paging: the page is the articles after this place in the list's order (page is not read). */
  after?: ListPosition;
}

/** A place in the list's order: an article's created_at and id. */
export interface ListPosition {
  createdAt: Date;
  id: number;
}

/** Below this offset walking the index from the top is cheaper than summing the day counts. */
const SEEK_FROM_OFFSET = 2_000;

const projectIds = sql`${sql.placeholder("projectIds")}::int8[]`;
const offset = sql`${sql.placeholder("offset")}::int8`;
const perPage = sql`${sql.placeholder("perPage")}::int8`;
const status = sql.placeholder("status");
const seekFrom = sql.raw(String(SEEK_FROM_OFFSET));

/**
 * The recorded changes that count towards a list's total: with a status, those adding to it or
 * moving articles away from it; without, only creations and deletions (a move between statuses
 * leaves the project's total as it was).
 */
const changesCounted = (byStatus: boolean): SQL => (byStatus ? sql`(status = ${status} or moved_from = ${status})` : sql`moved_from is null`);

/** What one recorded change adds to that total (a move away from the status takes off). */
const changeCounted = (byStatus: boolean): SQL =>
  byStatus ? sql`(case when status = ${status} then change else 0 end) - (case when moved_from = ${status} then change else 0 end)` : sql`change`;

/**
 * The page's ids, newest first. A deep offset starts the walk at the end of the day it falls in,
 * skipping the articles of newer days by their counts; each project is then an index-only range
 * scan of at most (offset within that day + per_page) entries, and the projects' scans are merged.
 */
function pageIds(byStatus: boolean): SQL {
  const ofStatus = byStatus ? sql`and status = ${status}` : sql``;
  return sql`
    with days as (
      select day, sum(articles) as articles from (
        select day, articles from ${articleDayCounts} where project_id = any(${projectIds}) ${ofStatus}
        union all
        select day, ${changeCounted(byStatus)} from ${articleCountChanges} where project_id = any(${projectIds}) and ${changesCounted(byStatus)}
      ) as counted
      where ${offset} >= ${seekFrom}
      group by day
    ), found as (
      select starts_before, skipped from (
        select (day + 1)::timestamp at time zone 'UTC' as starts_before, (sum(articles) over (order by day desc) - articles)::int8 as skipped, articles
        from days
      ) as newest_first
      where skipped + articles > ${offset}
      order by starts_before desc limit 1
    ), start as (
      select starts_before, skipped from found
      union all
      select 'infinity'::timestamptz, 0::int8 where ${offset} < ${seekFrom}
    )
    select page.id from start
    cross join (select distinct unnest(${projectIds}) as project_id) as listed
    cross join lateral (
      -- In the index's own order (desc nulls last), or Postgres would sort the whole range.
      select id, created_at from ${articles} as candidate
      where project_id = listed.project_id ${ofStatus} and created_at < start.starts_before
      order by created_at desc nulls last, id desc nulls last
      limit ${offset} - start.skipped + ${perPage}
    ) as page
    order by page.created_at desc nulls last, page.id desc nulls last
    offset ${offset} - (select skipped from start) limit ${perPage}`;
}

const afterCreatedAt = sql`${sql.placeholder("afterCreatedAt")}::timestamptz`;
const afterId = sql`${sql.placeholder("afterId")}::int8`;
/**
 * The place's time: the article's own created_at, read once by its id, so an article stored
 * before created_at was kept to the millisecond (its microseconds beyond the cursor's
 * milliseconds) is placed exactly; the cursor's time when the article is gone.
 */
const placeTime = sql`coalesce((select created_at from ${articles} where id = ${afterId}), ${afterCreatedAt})`;

/**
 * The ids of the page after a place in the list (a cursor), newest first, and one more to tell
 * whether another page follows: each project an index range scan that starts at the place (the
 * row comparison is the index's own order, so Postgres seeks to it) and reads at most per_page + 1
 * entries whatever the depth, the projects' scans merged.
 */
function idsAfter(byStatus: boolean): SQL {
  const ofStatus = byStatus ? sql`and status = ${status}` : sql``;
  return sql`
    select page.id from (select distinct unnest(${projectIds}) as project_id) as listed
    cross join lateral (
      select id, created_at from ${articles} as candidate
      where project_id = listed.project_id ${ofStatus} and (created_at, id) < (${placeTime}, ${afterId})
      order by created_at desc nulls last, id desc nulls last
      limit ${perPage} + 1
    ) as page
    order by page.created_at desc nulls last, page.id desc nulls last
    limit ${perPage} + 1`;
}

/** The rows whose ids `ids` selects, newest first: whole, or their ids only (the heap tuples are read, their long text is not). */
function rowsOf(db: Db, ids: SQL) {
  // An array of the ids (not `in`), so Postgres reads just those rows by primary key.
  const byIds = sql`${articles.id} = any(array(${ids}))`;
  const newestFirst = [sql`${articles.createdAt} desc nulls last`, sql`${articles.id} desc nulls last`];
  return {
    whole: (name: string) => db.select().from(articles).where(byIds).orderBy(...newestFirst).prepare(name),
    ids: (name: string) => db.select({ id: articles.id }).from(articles).where(byIds).orderBy(...newestFirst).prepare(name),
  };
}

function listStatements(db: Db, byStatus: boolean) {
  const inProjects = sql`${articleCounts.projectId} = any(${projectIds})`;
  const unfolded = sql`(select sum(${changeCounted(byStatus)}) from ${articleCountChanges} where project_id = any(${projectIds}) and ${changesCounted(byStatus)})`;
  const named = (name: string) => (byStatus ? `${name}_of_status` : name);
  const byPage = rowsOf(db, pageIds(byStatus));
  const byPlace = rowsOf(db, idsAfter(byStatus));
  return {
    total: db
      .select({ total: sql<string>`coalesce(sum(${articleCounts.articles}), 0) + coalesce(${unfolded}, 0)` })
      .from(articleCounts)
      .where(byStatus ? and(inProjects, eq(articleCounts.status, status)) : inProjects)
      .prepare(named("article_total")),
    page: byPage.whole(named("article_page")),
    pageIds: byPage.ids(named("article_page_ids")),
    // The page after a place (and one more article).
    pageAfter: byPlace.whole(named("article_page_after")),
    pageIdsAfter: byPlace.ids(named("article_page_ids_after")),
  };
}

const statements = preparedPerDatabase((db: Db) => ({
  all: listStatements(db, false),
  ofStatus: listStatements(db, true),
}));

/** The statements' values; the page window read as every list reads it (0 or less is unset). */
function checkedQuery(query: ArticleListQuery) {
  const { page, perPage } = pageWindow(query.page, query.perPage);
  const after = query.after;
  return {
    projectIds: query.projectIds,
    status: query.status,
    offset: (page - 1) * perPage,
    perPage,
    afterCreatedAt: after?.createdAt.toISOString(),
    afterId: after?.id,
  };
}

/** A page's rows and whether more follow it: a page after a place is read with one row more. */
function pageOf<T>(rows: T[], query: ArticleListQuery, perPage: number): { rows: T[]; more: boolean } {
  if (!query.after) return { rows, more: false };
  return { rows: rows.slice(0, perPage), more: rows.length > perPage };
}

/** Articles of the given projects, newest first, with the exact number of them (and, after a place, whether more follow). */
export async function listArticles(db: Db, query: ArticleListQuery): Promise<{ articles: ArticleRecord[]; total: number; more: boolean }> {
  const values = checkedQuery(query);
  if (query.projectIds.length === 0) return { articles: [], total: 0, more: false };
  const list = query.status ? statements(db).ofStatus : statements(db).all;
  // The total and the page are independent reads: run them side by side.
  const [[{ total }], rows] = await Promise.all([list.total.execute(values), (query.after ? list.pageAfter : list.page).execute(values)]);
  const page = pageOf(rows, query, values.perPage);
  return { articles: page.rows, total: Number(total), more: page.more };
}

/** The ids of the page listArticles would answer, with the same total. */
export async function listArticleIds(db: Db, query: ArticleListQuery): Promise<{ ids: number[]; total: number; more: boolean }> {
  const values = checkedQuery(query);
  if (query.projectIds.length === 0) return { ids: [], total: 0, more: false };
  const list = query.status ? statements(db).ofStatus : statements(db).all;
  const [[{ total }], rows] = await Promise.all([list.total.execute(values), (query.after ? list.pageIdsAfter : list.pageIds).execute(values)]);
  const page = pageOf(rows, query, values.perPage);
  return { ids: page.rows.map((row) => row.id), total: Number(total), more: page.more };
}
