// Hands an article's ends (completed, failed, published) and the versions a client's change adds
// to webhook-dispatcher for the project's webhook endpoints, after the change committed, as the
// event log is written (article-event-log.ts). Only projects with an endpoint get a job (one
// SISMEMBER otherwise). The spec's webhook_url is not concerned: its deliveries come from the
// runner's `webhooks` queue as before. Retried a few times; events Redis would not take are kept
// in Postgres and handed over by a background pass (domain/endpoint-event-backlog.ts). A failure
// is logged and never fails the committed change. A replica killed between a commit and its
// hand-over leaves a stale mark, and another hands over again what changed since
// (domain/endpoint-handover-marks.ts).
import type { Interceptor, StreamRequest, StreamResponse, UnaryRequest, UnaryResponse } from "@connectrpc/connect";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Queue } from "bullmq";
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { create } from "@bufbuild/protobuf";
import { ArticleLifecycleService, ArticleSchema, type Article } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { ArticleVersionSchema, type EditArticleResponse } from "../../../proto/gen/articles/article_store/v1/versions_pb.ts";
import { endpointProjectsKey, handOverEndpointEvent, projectHasEndpoints } from "../../kit/src/endpoint-events.ts";
import type { EndpointEventJob } from "../../kit/src/queues.ts";
import type { RedisConnection } from "../../kit/src/redis.ts";
import type { Logger } from "../../kit/src/logger.ts";
import { within } from "../../kit/src/deadline.ts";
import { endedArticles } from "./changed-articles.ts";
import { finalEventOf } from "./article-event-log.ts";
import { versionCreatedEvent, VERSION_CHANGES } from "./version-events.ts";
import type { Db } from "./db/client.ts";
import { handOverKept, keepForLater } from "./domain/endpoint-event-backlog.ts";
import { claimStaleMark, clientVersionsSince, dropMark, endedSince, markCovered, SWEEP_PAGE, type SweepPosition } from "./domain/endpoint-handover-marks.ts";
import { articleMessage, sourceMessage } from "./rpc.ts";
import { versionMessage } from "./version-rpc.ts";
import { startChangeFolding } from "../../kit/src/change-folding.ts";

// As the event log's writes: a lifecycle call waits this long at most when Redis is away.
const HANDOVER_TIMEOUT_MS = 500;
const ENDING_METHODS = new Set(["CompleteGeneration", "AddVersion", "MarkPublished", "FailArticle", "RecordDeliveries", "RecordPublication"]);
// A mark is renewed with every background pass; one not renewed for six passes is a replica gone.
const PASSES_TO_STALE = 6;
// Articles' times are Postgres's clock and the marks this process's: a sweep starts this much earlier.
const CLOCK_SLACK_MS = 5_000;

/** The endpoint event of an article's end, or undefined (a cancel is a failure the client asked for: not sent). */
export function articleEndEvent(article: Article, now = new Date()): EndpointEventJob | undefined {
  const ended = finalEventOf(article);
  if (!ended || (ended.event === "failed" && (ended.data as { cancelled?: boolean }).cancelled)) return undefined;
  const type = `article.${ended.event}`;
  // One event per version that completed or was published; a failure per time it failed (a retried article can fail again).
  const version = ended.event === "completed" ? article.currentVersionId : ended.event === "published" ? article.publishedVersionId : undefined;
  const failedAt = article.updatedAt ? timestampDate(article.updatedAt).getTime() : now.getTime();
  const eventId = `evt_${type}_${article.externalId}_${version ?? failedAt}`;
  return {
    eventId,
    type,
    occurredAt: (article.updatedAt ? timestampDate(article.updatedAt) : now).toISOString(),
    projectId: Number(article.projectId),
    accountId: Number(article.accountId),
    data: { id: Number(article.id), external_id: article.externalId, project_id: Number(article.projectId), ...ended.data },
  };
}

/** The event of a version a client's change added (an edit, a restore, a section revision). */
export function versionEndpointEvent(made: Pick<EditArticleResponse, "article" | "version">, occurredAt = new Date()): EndpointEventJob {
  const { article, version } = made as Required<typeof made>;
  return {
    eventId: `evt_article.version_created_${article.externalId}_${version.id}`,
    type: "article.version_created",
    occurredAt: occurredAt.toISOString(),
    projectId: Number(article.projectId),
    accountId: Number(article.accountId),
    data: { id: Number(article.id), external_id: article.externalId, project_id: Number(article.projectId), ...versionCreatedEvent(made).data },
  };
}

/**
 * The changes this replica is handing over, by when each call began: its mark's covered_until is
 * the earliest of them (now when there is none), as every change committed before is handed over.
 */
export class HandoverCover {
  readonly replica = `${hostname()}-${randomUUID()}`;
  private readonly open = new Map<number, number>();
  private next = 0;

  begin(): number {
    const token = this.next++;
    this.open.set(token, Date.now());
    return token;
  }

  end(token: number): void {
    this.open.delete(token);
  }

  coveredUntil(): Date {
    let earliest = Date.now();
    for (const began of this.open.values()) earliest = Math.min(earliest, began);
    return new Date(earliest);
  }
}

export interface EndpointEventHandover {
  db: Db;
  redis: RedisConnection;
  redisPrefix: string;
  queue: () => Queue<EndpointEventJob>;
  cover: HandoverCover;
}

/** Queues the event when its project has an endpoint. */
async function handOver({ redis, redisPrefix, queue }: EndpointEventHandover, event: EndpointEventJob): Promise<void> {
  if (await projectHasEndpoints(redis, redisPrefix, event.projectId!)) await handOverEndpointEvent(queue(), event);
}

/** Hands over again the events of every change since a gone replica's mark, then removes the mark; 1 when there was one, else 0. */
async function sweepStaleMark(handover: EndpointEventHandover, logger: Logger, staleMs: number): Promise<number> {
  const { db, redis, redisPrefix } = handover;
  const mark = await claimStaleMark(db, staleMs);
  if (!mark) return 0;
  const projectIds = (await redis.smembers(endpointProjectsKey(redisPrefix))).map(Number);
  const since = new Date(mark.coveredUntil.getTime() - CLOCK_SLACK_MS);
  let events = 0;
  const pages = async <T>(read: (from?: SweepPosition) => Promise<T[]>, position: (row: T) => SweepPosition, eventOf: (row: T) => EndpointEventJob | undefined) => {
    for (let from: SweepPosition | undefined; ; ) {
      const page = await read(from);
      for (const row of page) {
        const event = eventOf(row);
        if (!event) continue;
        await handOver(handover, event);
        events++;
      }
      if (page.length < SWEEP_PAGE) return;
      from = position(page.at(-1)!);
    }
  };
  if (projectIds.length > 0) {
    await pages(
      (from) => endedSince(db, projectIds, since, from),
      (a) => ({ at: a.updatedAt, id: a.id }),
      (a) => articleEndEvent(create(ArticleSchema, articleMessage(a))),
    );
    await pages(
      (from) => clientVersionsSince(db, projectIds, since, from),
      ({ version }) => ({ at: version.createdAt, id: version.id }),
      ({ article, version }) => versionEndpointEvent({ article: create(ArticleSchema, articleMessage(article)), version: create(ArticleVersionSchema, versionMessage(sourceMessage, version)) }, version.createdAt),
    );
  }
  await dropMark(db, mark.replica);
  logger.warn("a replica went away without its goodbye: handed its endpoint events over again", { replica: mark.replica, since: since.toISOString(), events });
  return 1;
}

/**
 * The background pass: the events kept while Redis was away, this replica's mark renewed, and the
 * marks of replicas gone swept. `stop` removes this replica's mark (its calls have drained).
 */
export function startEndpointEventBacklog(handover: EndpointEventHandover, logger: Logger, passMs = 5_000) {
  const { db, cover } = handover;
  const folding = startChangeFolding({
    what: "kept endpoint event",
    fold: async () => {
      await markCovered(db, cover.replica, cover.coveredUntil());
      while ((await sweepStaleMark(handover, logger, PASSES_TO_STALE * passMs)) > 0);
      return handOverKept(db, (event) => handOver(handover, event));
    },
    batch: 200,
    everyMs: passMs,
    logger,
  });
  return {
    async stop() {
      await folding.stop();
      await dropMark(db, cover.replica).catch((error) => logger.warn("could not remove the endpoint hand-over mark; another replica will sweep it", { error: (error as Error).message }));
    },
  };
}

export function handOverEndpointEvents(handover: EndpointEventHandover, logger: Logger): Interceptor {
  return (next) => async (req) => {
    const ending = req.service.typeName === ArticleLifecycleService.typeName && ENDING_METHODS.has(req.method.name);
    if (!ending && !VERSION_CHANGES.has(`${req.service.typeName}/${req.method.name}`)) return next(req);
    const token = handover.cover.begin();
    try {
      return await handOverAfter(req, await next(req));
    } finally {
      handover.cover.end(token);
    }
  };

  async function handOverAfter(req: UnaryRequest | StreamRequest, res: UnaryResponse | StreamResponse) {
    if (res.stream) return res;
    const events: EndpointEventJob[] = [];
    if (req.service.typeName === ArticleLifecycleService.typeName) {
      for (const article of endedArticles(res.message, req.contextValues)) {
        const event = articleEndEvent(article);
        if (event) events.push(event);
      }
    } else {
      const made = res.message as unknown as EditArticleResponse;
      if (made.article && made.version) events.push(versionEndpointEvent(made));
    }
    if (events.length === 0) return res;
    const handedOver = new Set<string>();
    const tryHandOver = async (event: EndpointEventJob) => {
      for (let attempt = 1; ; attempt++) {
        try {
          await handOver(handover, event);
          handedOver.add(event.eventId);
          return;
        } catch (error) {
          if (attempt >= 3) throw error;
          await Bun.sleep(100 * attempt);
        }
      }
    };
    try {
      await within(Promise.all(events.map(tryHandOver)), HANDOVER_TIMEOUT_MS);
    } catch (error) {
      const left = events.filter((e) => !handedOver.has(e.eventId));
      logger.warn("could not hand article events over to the webhook endpoints; keeping them for later", { eventIds: left.map((e) => e.eventId), error: (error as Error).message });
      await keepForLater(handover.db, left).catch((kept) => logger.error("article events for the webhook endpoints lost", { eventIds: left.map((e) => e.eventId), error: (kept as Error).message }));
    }
    return res;
  }
}
