// Moves ended articles' event logs out of Redis: each stream is copied into the archive
// (domain/event-archive.ts) and then expires ENDED_LOG_SECONDS later (kit/article-events.ts), so
// Redis holds the logs of running articles only. The copy is made right after article-store writes
// an article's final event, or a later publication (article-event-log.ts). Should that copy fail
// (it is logged and never fails the committed change), the stream keeps its week-long expiry and
// the hourly sweep here copies it: it finds every stream still kept that long whose article has
// ended. The same sweep prunes archived logs past their week, as the outbox relay prunes its rows.
// Every step is safe to repeat, so replicas sweeping side by side only repeat each other.
import {
  appendEndingEvents,
  articleEventsKey,
  articleEventsPattern,
  ENDED_LOG_SECONDS,
  expireArchivedLog,
  externalIdOfEventsKey,
  rawStreamEntry,
  type ArticleEvent,
  type RawLoggedEvent,
  type StreamEntry,
} from "../../kit/src/article-events.ts";
import type { Logger } from "../../kit/src/logger.ts";
import { logWritesOf } from "../../kit/src/ordered-log-writes.ts";
import { scanKeys, type RedisConnection } from "../../kit/src/redis.ts";
import type { Db } from "./db/client.ts";
import { archivedLogEnd, archiveEntries, endedArticlesAmong, pruneArchivedEvents } from "./domain/event-archive.ts";
import { settledWithin } from "../../kit/src/deadline.ts";

export interface LogArchive {
  db: Db;
  redis: RedisConnection;
  redisPrefix: string;
}

export interface LoggedArticle {
  id: number;
  externalId: string;
}

const SWEEP_EVERY_MS = 3_600_000;
const SCAN_COUNT = 1000;
// Shutdown waits this long at most for a sweep held up by an unreachable Redis or Postgres.
const STOP_WAIT_MS = 5_000;

/**
 * Appends article-store's events to an ended article's log (see appendEndingEvents). When the
 * stream has already gone, the log ends where its archive does, so a repeated end is still
 * recognised and the new entries' ids follow the archived ones. Tried again until it lands, after
 * the article's earlier writes of this process (ordered-log-writes.ts); resolves once it landed or
 * was given up (reported to `onGiveUp`), never rejects.
 */
export function appendToEndedLog(archive: LogArchive, article: LoggedArticle, events: readonly ArticleEvent[], onGiveUp: (error: Error) => void, unlessRepeated?: string): Promise<void> {
  const { db, redis, redisPrefix } = archive;
  return logWritesOf(redis).enqueue(
    article.externalId,
    async () => {
      if ((await appendEndingEvents(redis, redisPrefix, article.externalId, events, { unlessRepeated })) !== "absent") return;
      await appendEndingEvents(redis, redisPrefix, article.externalId, events, { unlessRepeated, archivedEnd: await archivedLogEnd(db, article.id) });
    },
    onGiveUp,
  );
}

/** Copies each article's stream into the archive, then lets the stream expire; how many entries were read. */
export async function archiveArticleLogs(archive: LogArchive, articles: readonly LoggedArticle[]): Promise<number> {
  const { db, redis, redisPrefix } = archive;
  const streams = (await Promise.all(articles.map((a) => redis.xrange(articleEventsKey(redis, redisPrefix, a.externalId), "-", "+")))) as StreamEntry[][];
  const logs = articles.map((article, i) => ({
    article,
    entries: streams[i]!.map(rawStreamEntry).filter((e): e is RawLoggedEvent => e !== undefined),
    lastId: streams[i]!.at(-1)?.[0],
  }));
  await archiveEntries(db, logs.map(({ article, entries }) => ({ articleId: article.id, entries })));
  await Promise.all(logs.flatMap(({ article, lastId }) => (lastId ? [expireArchivedLog(redis, redisPrefix, article.externalId, lastId)] : [])));
  return logs.reduce((n, log) => n + log.entries.length, 0);
}

/**
 * Archives the streams that still have their week-long expiry (or none) while their article has
 * ended: a copy that failed, or events that arrived after it (a run's last events written after a
 * cancel). Walks the keys under REDIS_PREFIX a page at a time; returns how many articles it archived.
 */
export async function sweepUnarchivedLogs(archive: LogArchive): Promise<number> {
  const { db, redis, redisPrefix } = archive;
  let swept = 0;
  // On a cluster, every master's keys in turn.
  for await (const keys of scanKeys(redis, articleEventsPattern(redisPrefix), SCAN_COUNT)) {
    const ttls = await Promise.all(keys.map((key) => redis.ttl(key)));
    // -1: no expiry; longer than an archived stream keeps: not archived since its last entry.
    const unarchived = keys.filter((_, i) => ttls[i] === -1 || ttls[i]! > ENDED_LOG_SECONDS).map(externalIdOfEventsKey);
    const ended = await endedArticlesAmong(db, unarchived);
    if (ended.length > 0) await archiveArticleLogs(archive, ended);
    swept += ended.length;
  }
  return swept;
}

/** The hourly sweep and prune, first right after start. */
export function startLogArchiveUpkeep(opts: LogArchive & { logger: Logger }): { stop(): Promise<void> } {
  const { logger } = opts;
  let stopped = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> | undefined;
  const upkeep = async () => {
    try {
      const archived = await sweepUnarchivedLogs(opts);
      const pruned = await pruneArchivedEvents(opts.db);
      if (archived > 0 || pruned > 0) logger.info("event log upkeep", { archived, pruned });
    } catch (error) {
      // Redis or Postgres away: the next sweep finds the same logs.
      logger.error("event log upkeep failed", { error: (error as Error).message });
    }
  };
  const schedule = (ms: number) => {
    timer = setTimeout(async () => {
      running = upkeep();
      await running;
      running = undefined;
      if (!stopped) schedule(SWEEP_EVERY_MS);
    }, ms);
  };
  schedule(0);
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      if (running) await settledWithin(running, STOP_WAIT_MS);
    },
  };
}
