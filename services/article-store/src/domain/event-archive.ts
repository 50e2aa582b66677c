// The archive of ended articles' event logs: the entries of each article's Redis stream, copied
// with their stream ids once the article ended (log-archiver.ts), read back by the gateway through
// ListArticleEvents when Redis no longer holds them. Copying is idempotent (one row per article and
// stream id), so a copy repeated or overlapping an earlier one adds only what is new. An article's
// entries are kept a week after its last one, as its stream was.
import { and, asc, desc, eq, inArray, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { articleEvents, articles } from "../db/schema.ts";
import { notFound, throwIfAny } from "../../../kit/src/errors.ts";
import { isStreamId, streamIdParts, type ArchivedLogEnd, type RawLoggedEvent } from "../../../kit/src/article-events.ts";
import { isUuid } from "../../../kit/src/rules/identifiers.ts";

/** As long as the log's stream was kept after its last event (kit/article-events.ts). */
export const ARCHIVE_KEPT_MS = 7 * 86_400_000;
export const MAX_EVENTS_PER_READ = 1000;
// Five parameters a row: well under Postgres's 65,535 a statement.
const INSERT_BATCH = 2000;
const PRUNE_BATCH = 10_000;

/** One article's log as its stream held it. */
export interface ArticleLog {
  articleId: number;
  entries: readonly RawLoggedEvent[];
}

/** Copies the entries into the archive; those already there stay as they are. */
export async function archiveEntries(db: Db, logs: readonly ArticleLog[]): Promise<void> {
  const rows = logs.flatMap(({ articleId, entries }) =>
    entries.map(({ id, event, data }) => {
      const [ms, seq] = streamIdParts(id);
      return { articleId, streamMs: Number(ms), streamSeq: Number(seq), event, data };
    }),
  );
  for (let i = 0; i < rows.length; i += INSERT_BATCH) await db.insert(articleEvents).values(rows.slice(i, i + INSERT_BATCH)).onConflictDoNothing();
}

const idOf = (row: { streamMs: number; streamSeq: number }) => `${row.streamMs}-${row.streamSeq}`;

/** Where the article's archived log ends; id "0-0" when nothing is archived. */
export async function archivedLogEnd(db: Db, articleId: number): Promise<ArchivedLogEnd> {
  const [last] = await db
    .select({ streamMs: articleEvents.streamMs, streamSeq: articleEvents.streamSeq, event: articleEvents.event })
    .from(articleEvents)
    .where(eq(articleEvents.articleId, articleId))
    .orderBy(desc(articleEvents.streamMs), desc(articleEvents.streamSeq))
    .limit(1);
  return last ? { id: idOf(last), event: last.event } : { id: "0-0", event: "" };
}

export interface ArchivedEventsPage {
  events: RawLoggedEvent[];
  /** The newest archived event's id; undefined when none is archived. */
  lastEventId: string | undefined;
}

/** The archived events of an article after `afterId`, oldest first, at most `limit` (0: MAX_EVENTS_PER_READ). */
export async function archivedEventsAfter(db: Db, externalId: string, afterId: string, limit: number): Promise<ArchivedEventsPage> {
  const after = afterId === "" ? "0-0" : afterId;
  const errors: Record<string, string[]> = {};
  if (!isStreamId(after)) errors.after_event_id = ['after_event_id must be a stream id, e.g. "1718000000000-0".'];
  if (!Number.isInteger(limit) || limit < 0 || limit > MAX_EVENTS_PER_READ) errors.limit = [`limit must be 1 to ${MAX_EVENTS_PER_READ} (0 for ${MAX_EVENTS_PER_READ}).`];
  throwIfAny(errors);
  if (!isUuid(externalId)) throw notFound("No such article.");
  const [article] = await db.select({ id: articles.id }).from(articles).where(eq(articles.externalId, externalId.toLowerCase()));
  if (!article) throw notFound("No such article.");
  const [ms, seq] = streamIdParts(after).map(Number) as [number, number];
  const [rows, end] = await Promise.all([
    db
      .select({ streamMs: articleEvents.streamMs, streamSeq: articleEvents.streamSeq, event: articleEvents.event, data: articleEvents.data })
      .from(articleEvents)
      .where(and(eq(articleEvents.articleId, article.id), sql`(${articleEvents.streamMs}, ${articleEvents.streamSeq}) > (${ms}, ${seq})`))
      .orderBy(asc(articleEvents.streamMs), asc(articleEvents.streamSeq))
      .limit(limit || MAX_EVENTS_PER_READ),
    archivedLogEnd(db, article.id),
  ]);
  return { events: rows.map((row) => ({ id: idOf(row), event: row.event, data: row.data })), lastEventId: end.event === "" ? undefined : end.id };
}

/** Of these external_ids, the articles that have ended (completed, published or failed). */
export async function endedArticlesAmong(db: Db, externalIds: readonly string[]): Promise<{ id: number; externalId: string }[]> {
  const wanted = externalIds.filter(isUuid).map((id) => id.toLowerCase());
  if (wanted.length === 0) return [];
  return db
    .select({ id: articles.id, externalId: articles.externalId })
    .from(articles)
    .where(and(inArray(articles.externalId, wanted), inArray(articles.status, ["completed", "published", "failed"])));
}

/**
 * Deletes the logs whose last event is more than `keptMs` old, oldest entries first in batches of
 * `batch` (each its own short statement, walking the age index); an entry older than that stays
 * while its article has a newer one. Returns how many entries went.
 */
export async function pruneArchivedEvents(db: Db, keptMs = ARCHIVE_KEPT_MS, batch = PRUNE_BATCH): Promise<number> {
  const cutoff = sql`(extract(epoch from now()) * 1000)::bigint - ${keptMs}::bigint`;
  let pruned = 0;
  for (;;) {
    const removed = await db.execute<{ article_id: number }>(sql`
      with old as (
        select o.article_id, o.stream_ms, o.stream_seq from ${articleEvents} o
        where o.stream_ms < ${cutoff}
          and not exists (select 1 from ${articleEvents} n where n.article_id = o.article_id and n.stream_ms >= ${cutoff})
        order by o.stream_ms
        limit ${batch}
      )
      delete from ${articleEvents} e using old
      where e.article_id = old.article_id and e.stream_ms = old.stream_ms and e.stream_seq = old.stream_seq
      returning e.article_id`);
    pruned += removed.length;
    if (removed.length < batch) return pruned;
  }
}
