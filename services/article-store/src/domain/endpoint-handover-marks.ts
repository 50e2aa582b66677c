// What a replica that died mid-call may have left unsaid to the webhook endpoints. A change's
// endpoint events are handed over after it commits (endpoint-event-handover.ts); a replica killed
// between the commit and the hand-over would lose them, and Postgres alone outlives it. So each
// replica keeps a mark here, renewed every few seconds: every change it committed before
// `covered_until` has had its events handed over or kept in the backlog. A replica gone without
// removing its mark leaves it stale; another claims it and hands over again the events of every
// change made since its `covered_until` in a project with endpoints (a repeat is harmless: the
// event's id is its job's id and its deliveries' key), then removes it.
//
// The sweep reads by project and age without an index of its own (an index on updated_at would
// cost every write to articles); it runs only after a replica died.
import { and, asc, eq, getTableColumns, gt, gte, inArray, or, sql, type AnyColumn } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { articleVersions, articles, endpointHandoverMarks } from "../db/schema.ts";
import type { ArticleRecord } from "./articles.ts";
import type { VersionSummary } from "./article-versions.ts";

/** The statuses whose change is an endpoint event (article-event-log.ts, finalEventOf). */
const ENDED = ["completed", "failed", "published"] as const;
/** The versions a client's change adds (an edit, a restore, a section revision): article.version_created. */
const CLIENT_VERSION_KINDS = ["edited", "restored", "section_rewrite"];
/** Rows a sweep reads at a time. */
export const SWEEP_PAGE = 200;

/** Renews this replica's mark. */
export async function markCovered(db: Db, replica: string, coveredUntil: Date): Promise<void> {
  await db
    .insert(endpointHandoverMarks)
    .values({ replica, coveredUntil })
    .onConflictDoUpdate({ target: endpointHandoverMarks.replica, set: { coveredUntil, seenAt: sql`now()` } });
}

export async function dropMark(db: Db, replica: string): Promise<void> {
  await db.delete(endpointHandoverMarks).where(eq(endpointHandoverMarks.replica, replica));
}

/**
 * Claims one mark not renewed for `staleMs` (its replica is gone): renewed in the claimant's name
 * so no other replica sweeps it meanwhile; stale again if the claimant dies before dropping it.
 */
export async function claimStaleMark(db: Db, staleMs: number): Promise<{ replica: string; coveredUntil: Date } | undefined> {
  const [claimed] = await db
    .update(endpointHandoverMarks)
    .set({ seenAt: sql`now()` })
    .where(
      eq(
        endpointHandoverMarks.replica,
        sql`(select replica from ${endpointHandoverMarks} where seen_at < now() - make_interval(secs => ${staleMs / 1000}) limit 1 for update skip locked)`,
      ),
    )
    .returning({ replica: endpointHandoverMarks.replica, coveredUntil: endpointHandoverMarks.coveredUntil });
  return claimed;
}

/** Where a sweep has read to: the last row's time and id. */
export interface SweepPosition {
  at: Date;
  id: number;
}

// Bound as one array: a fleet may have thousands of projects with endpoints.
const inProjects = (projectIds: number[]) => sql`${articles.projectId} = any(${sql.param(projectIds)}::int8[])`;

const after = (time: AnyColumn, id: AnyColumn, from: SweepPosition | undefined, since: Date) =>
  from ? or(gt(time, from.at), and(eq(time, from.at), gt(id, from.id))) : gte(time, since);

/** A page of the articles of these projects that ended (completed, failed, published) or changed since. */
export async function endedSince(db: Db, projectIds: number[], since: Date, from?: SweepPosition): Promise<ArticleRecord[]> {
  return db
    .select()
    .from(articles)
    .where(and(inProjects(projectIds), inArray(articles.status, [...ENDED]), after(articles.updatedAt, articles.id, from, since)))
    .orderBy(asc(articles.updatedAt), asc(articles.id))
    .limit(SWEEP_PAGE);
}

/** A page of the versions clients' changes added since to the articles of these projects, with their articles. */
export async function clientVersionsSince(db: Db, projectIds: number[], since: Date, from?: SweepPosition): Promise<{ article: ArticleRecord; version: VersionSummary }[]> {
  const { content: _content, ...summary } = getTableColumns(articleVersions);
  return db
    .select({ article: articles, version: summary })
    .from(articleVersions)
    .innerJoin(articles, eq(articles.id, articleVersions.articleId))
    .where(
      and(
        inProjects(projectIds),
        inArray(articleVersions.kind, CLIENT_VERSION_KINDS),
        after(articleVersions.createdAt, articleVersions.id, from, since),
      ),
    )
    .orderBy(asc(articleVersions.createdAt), asc(articleVersions.id))
    .limit(SWEEP_PAGE);
}

