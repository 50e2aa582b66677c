// Hands an article's ends (completed, failed, published) and the versions a client's change adds
// to webhook-dispatcher for the project's webhook endpoints, after the change committed, as the
// event log is written (article-event-log.ts). Only projects with an endpoint get a job (one
// SISMEMBER otherwise). The spec's webhook_url is not concerned: its deliveries come from the
// runner's `webhooks` queue as before. Retried a few times; a failure is logged and never fails
// the committed change.
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

const HANDOVER_TIMEOUT_MS = 2_000;
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

export function handOverEndpointEvents(redis: RedisConnection, redisPrefix: string, queue: () => Queue<EndpointEventJob>, logger: Logger): Interceptor {
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
    const handOver = async (event: EndpointEventJob) => {
      for (let attempt = 1; ; attempt++) {
        try {
          if (await projectHasEndpoints(redis, redisPrefix, event.projectId!)) await handOverEndpointEvent(queue(), event);
          return;
        } catch (error) {
          if (attempt >= 3) throw error;
          await Bun.sleep(100 * attempt);
        }
      }
    };
    await within(Promise.all(events.map(handOver)), HANDOVER_TIMEOUT_MS).catch((error) =>
      logger.warn("could not hand an article event over to the webhook endpoints", { eventIds: events.map((e) => e.eventId), error: (error as Error).message }),
    );
    return res;
  };
}
