// Hands an article's ends (completed, failed, published) and the versions a client's change adds
// to webhook-dispatcher for the project's webhook endpoints, after the change committed, as the
// event log is written (article-event-log.ts). Only projects with an endpoint get a job (one
// SISMEMBER otherwise). The spec's webhook_url is not concerned: its deliveries come from the
// runner's `webhooks` queue as before. Retried a few times; events Redis would not take are kept
// in Postgres and handed over by a background pass (domain/endpoint-event-backlog.ts). A failure
// is logged and never fails the committed change.
import type { Interceptor } from "@connectrpc/connect";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Queue } from "bullmq";
import { ArticleLifecycleService, type Article } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { ArticleVersionService, type EditArticleResponse } from "../../../proto/gen/articles/article_store/v1/versions_pb.ts";
import { handOverEndpointEvent, projectHasEndpoints } from "../../kit/src/endpoint-events.ts";
import type { EndpointEventJob } from "../../kit/src/queues.ts";
import type { RedisConnection } from "../../kit/src/redis.ts";
import type { Logger } from "../../kit/src/logger.ts";
import { within } from "../../kit/src/deadline.ts";
import { endedArticles } from "./changed-articles.ts";
import { finalEventOf } from "./article-event-log.ts";
import { versionCreatedEvent, VERSION_CHANGES } from "./version-events.ts";
import type { Db } from "./db/client.ts";
import { handOverKept, keepForLater } from "./domain/endpoint-event-backlog.ts";
import { startChangeFolding } from "../../kit/src/change-folding.ts";

// As the event log's writes: a lifecycle call waits this long at most when Redis is away.
const HANDOVER_TIMEOUT_MS = 500;
const ENDING_METHODS = new Set(["CompleteGeneration", "AddVersion", "MarkPublished", "FailArticle", "RecordDeliveries", "RecordPublication"]);

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

export interface EndpointEventHandover {
  db: Db;
  redis: RedisConnection;
  redisPrefix: string;
  queue: () => Queue<EndpointEventJob>;
}

/** Queues the event when its project has an endpoint. */
async function handOver({ redis, redisPrefix, queue }: EndpointEventHandover, event: EndpointEventJob): Promise<void> {
  if (await projectHasEndpoints(redis, redisPrefix, event.projectId!)) await handOverEndpointEvent(queue(), event);
}

/** The background pass over the events kept while Redis was away. */
export function startEndpointEventBacklog(handover: EndpointEventHandover, logger: Logger) {
  return startChangeFolding({ what: "kept endpoint event", fold: () => handOverKept(handover.db, (event) => handOver(handover, event)), batch: 200, everyMs: 5_000, logger });
}

export function handOverEndpointEvents(handover: EndpointEventHandover, logger: Logger): Interceptor {
  return (next) => async (req) => {
    const res = await next(req);
    if (res.stream) return res;
    const events: EndpointEventJob[] = [];
    if (req.service.typeName === ArticleLifecycleService.typeName && ENDING_METHODS.has(req.method.name)) {
      for (const article of endedArticles(res.message, req.contextValues)) {
        const event = articleEndEvent(article);
        if (event) events.push(event);
      }
    } else if (req.service.typeName === ArticleVersionService.typeName && VERSION_CHANGES.has(req.method.name)) {
      const made = res.message as unknown as EditArticleResponse;
      if (made.article && made.version) {
        const { data } = versionCreatedEvent(made);
        events.push({
          eventId: `evt_article.version_created_${made.article.externalId}_${made.version.id}`,
          type: "article.version_created",
          occurredAt: new Date().toISOString(),
          projectId: Number(made.article.projectId),
          accountId: Number(made.article.accountId),
          data: { id: Number(made.article.id), external_id: made.article.externalId, project_id: Number(made.article.projectId), ...data },
        });
      }
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
  };
}
