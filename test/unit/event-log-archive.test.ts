// The archive of ended articles' event logs below the API (services/article-store/src/
// log-archiver.ts, domain/event-archive.ts), on a real Postgres (a throwaway database) and Redis:
// a copy is idempotent and keeps ids and data as the stream held them; the sweep archives the
// streams of ended articles that still have their week-long expiry and leaves running ones alone;
// pruning removes the logs whose last event is older than a week; reads page by stream id.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes, randomUUID } from "node:crypto";
import { eq } from "drizzle-orm";
import IORedis from "ioredis";
import { openScratchDatabase, type ScratchDatabase } from "../harness/scratch-database.ts";
import { schema } from "../../services/article-store/src/db/client.ts";
import { articleEvents, articles, type ArticleStatus } from "../../services/article-store/src/db/schema.ts";
import { createArticle } from "../../services/article-store/src/domain/articles.ts";
import { archivedEventsAfter, pruneArchivedEvents } from "../../services/article-store/src/domain/event-archive.ts";
import { archiveArticleLogs, sweepUnarchivedLogs, type LogArchive } from "../../services/article-store/src/log-archiver.ts";
import { appendArticleEvents, articleEventsKey, ENDED_LOG_SECONDS } from "../../services/kit/src/article-events.ts";
import { storedArticle } from "../api/articles-fixtures.ts";
import type { Tenant } from "../harness/tenants.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const DAY = 86_400_000;
let database: ScratchDatabase<typeof schema>;
let redis: IORedis;
let archive: LogArchive;

beforeAll(async () => {
  database = await openScratchDatabase("event_log_archive", {
    schemaName: "article_store",
    schema,
    migrationsFolder: new URL("../../services/article-store/src/db/migrations", import.meta.url),
  });
  redis = new IORedis(REDIS_URL);
  archive = { db: database.db, redis, redisPrefix: `test-event-archive-${randomBytes(4).toString("hex")}` };
});

afterAll(async () => {
  const keys = await redis.keys(`${archive.redisPrefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
  await database?.drop();
});

/** An article in `status`, with `events` logged in its stream (one step each). */
async function loggedArticle(status: ArticleStatus, events = 3) {
  const { article } = await createArticle(database.db, storedArticle({ accountId: 1, projectId: 1 } as Tenant));
  await database.db.update(articles).set({ status }).where(eq(articles.id, article.id));
  for (let step = 1; step <= events; step++) await appendArticleEvents(redis, archive.redisPrefix, article.externalId, [{ event: "step_finished", data: { step, cost: "0.01", name: `Step ${step}` } }]);
  const key = articleEventsKey(redis, archive.redisPrefix, article.externalId);
  return { id: article.id, externalId: article.externalId, key, stream: (await redis.xrange(key, "-", "+")) as [string, string[]][] };
}

const archived = async (externalId: string, after = "0-0", limit = 0) => (await archivedEventsAfter(database.db, externalId, after, limit)).events;

describe("archiving", () => {
  test("copies every entry with its stream id, event and data text, lets the stream expire soon, and a repeat adds nothing", async () => {
    const a = await loggedArticle("completed");
    await archiveArticleLogs(archive, [a]);
    expect(await archived(a.externalId)).toEqual(a.stream.map(([id, [, event, , data]]) => ({ id, event: event!, data: data! })));
    const ttl = await redis.ttl(a.key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(ENDED_LOG_SECONDS);

    await archiveArticleLogs(archive, [a]);
    expect(await archived(a.externalId)).toHaveLength(3);
    const page = await archivedEventsAfter(database.db, a.externalId, a.stream[0]![0], 1);
    expect(page).toEqual({ events: [{ id: a.stream[1]![0], event: "step_finished", data: a.stream[1]![1][3]! }], lastEventId: a.stream[2]![0] });
  });

  test("reads refuse what is not a stream id or a limit, and an unknown article is not found", async () => {
    const a = await loggedArticle("completed", 1);
    await expect(archivedEventsAfter(database.db, a.externalId, "yesterday", 0)).rejects.toMatchObject({ kind: "invalid", fields: { after_event_id: expect.any(Array) } });
    await expect(archivedEventsAfter(database.db, a.externalId, "0-0", 1001)).rejects.toMatchObject({ kind: "invalid", fields: { limit: expect.any(Array) } });
    await expect(archivedEventsAfter(database.db, randomUUID(), "0-0", 0)).rejects.toMatchObject({ kind: "not_found" });
    expect(await archivedEventsAfter(database.db, (await loggedArticle("writing", 0)).externalId, "", 0)).toEqual({ events: [], lastEventId: undefined });
  });
});

describe("the sweep", () => {
  test("archives the still-kept streams of ended articles, and leaves running articles' streams and archived ones as they are", async () => {
    const completed = await loggedArticle("completed");
    const failed = await loggedArticle("failed", 2);
    const running = await loggedArticle("writing");
    const done = await loggedArticle("published");
    await archiveArticleLogs(archive, [done]);
    await database.db.delete(articleEvents).where(eq(articleEvents.articleId, done.id));

    await sweepUnarchivedLogs(archive);
    expect((await archived(completed.externalId)).map((e) => e.id)).toEqual(completed.stream.map(([id]) => id));
    expect((await archived(failed.externalId)).map((e) => e.id)).toEqual(failed.stream.map(([id]) => id));
    for (const a of [completed, failed]) expect(await redis.ttl(a.key)).toBeLessThanOrEqual(ENDED_LOG_SECONDS);
    // Running: not archived, its stream kept the week.
    expect(await archived(running.externalId)).toEqual([]);
    expect(await redis.ttl(running.key)).toBeGreaterThan(7 * 86_400 - 60);
    // Already archived (its stream about to expire): the sweep does not copy it again.
    expect(await archived(done.externalId)).toEqual([]);
  });

  test("an entry written after the copy keeps the stream its week, and the sweep then archives it", async () => {
    const a = await loggedArticle("failed", 1);
    await archiveArticleLogs(archive, [a]);
    // A run's last event, written after the cancel that ended its article.
    await appendArticleEvents(redis, archive.redisPrefix, a.externalId, [{ event: "step_finished", data: { step: 2 } }]);
    expect(await redis.ttl(a.key)).toBeGreaterThan(7 * 86_400 - 60);
    await sweepUnarchivedLogs(archive);
    expect((await archived(a.externalId)).map((e) => e.event)).toEqual(["step_finished", "step_finished"]);
    expect(await redis.ttl(a.key)).toBeLessThanOrEqual(ENDED_LOG_SECONDS);
  });
});

describe("pruning", () => {
  test("removes the logs whose last event is more than a week old, and keeps an old event of a log that has a newer one", async () => {
    const old = await loggedArticle("completed", 0);
    const mixed = await loggedArticle("completed", 0);
    const now = Date.now();
    const row = (articleId: number, ms: number, event = "step_finished") => ({ articleId, streamMs: ms, streamSeq: 0, event, data: "{}" });
    await database.db.insert(articleEvents).values([row(old.id, now - 9 * DAY), row(old.id, now - 8 * DAY, "completed"), row(mixed.id, now - 9 * DAY), row(mixed.id, now - 2 * DAY, "published")]);

    expect(await pruneArchivedEvents(database.db, 7 * DAY, 1)).toBe(2);
    expect(await archived(old.externalId)).toEqual([]);
    expect((await archived(mixed.externalId)).map((e) => e.event)).toEqual(["step_finished", "published"]);
  });
});
