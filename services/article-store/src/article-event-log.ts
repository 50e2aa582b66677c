// Writes the ends of an article's run to its event log (services/kit/src/article-events.ts):
// completed, published and failed, once each, after the lifecycle call committed them, and each
// recorded publication (a `publication` event, before the published it may bring); and tells
// the runners when a client cancelled an article so the one working on it stops at once. Like
// the change announcements, a failure here is logged and never fails the committed change.
import type { Interceptor } from "@connectrpc/connect";
import type IORedis from "ioredis";
import { ArticleLifecycleService, type Article, type RecordPublicationRequest } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { appendArticleEvents, appendFinalArticleEvent, articleCancelsChannel, isCancelledArticle, type ArticleEvent } from "../../kit/src/article-events.ts";
import type { Logger } from "../../kit/src/logger.ts";
import { presentCost, presentPublication } from "../../kit/src/public-article.ts";
import { endedArticles } from "./changed-articles.ts";

const WRITE_TIMEOUT_MS = 500;
// The calls that can end an article; progress and the other records never do.
const ENDING_METHODS = new Set(["CompleteGeneration", "AddVersion", "MarkPublished", "FailArticle", "CancelArticle", "RecordDeliveries", "RecordPublication"]);

/** The final event an article's record stands for, if it has ended. */
export function finalEventOf(article: Article): ArticleEvent | undefined {
  const common = { status: article.status, cost: presentCost(article.cost) };
  if (article.status === "completed") {
    return { event: "completed", data: { ...common, actual_word_count: article.actualWordCount, ai_model_used: article.aiModelUsed ?? null, current_version_id: article.currentVersionId === undefined ? null : Number(article.currentVersionId) } };
  }
  if (article.status === "published") {
    return { event: "published", data: { ...common, published_version_id: article.publishedVersionId === undefined ? null : Number(article.publishedVersionId) } };
  }
  if (article.status === "failed") return { event: "failed", data: { ...common, reason: article.failureReason ?? null, cancelled: isCancelledArticle(article) } };
  return undefined;
}

export function logArticleEnds(redis: IORedis, redisPrefix: string, logger: Logger): Interceptor {
  return (next) => async (req) => {
    const res = await next(req);
    if (req.service.typeName !== ArticleLifecycleService.typeName || res.stream || !ENDING_METHODS.has(req.method.name)) return res;
    const articles = endedArticles(res.message, req.contextValues);
    const writes: Promise<unknown>[] = [];
    if (req.method.name === "RecordPublication") {
      const asked = req.message as unknown as RecordPublicationRequest;
      const article = articles[0];
      const recorded = article?.publications.find((p) => p.destinationId === asked.publication?.destinationId);
      const ended = asked.markPublished && article ? finalEventOf(article) : undefined;
      // In order: the publication, then the published it brought.
      if (recorded && article) {
        writes.push(
          appendArticleEvents(redis, redisPrefix, article.externalId, [{ event: "publication", data: presentPublication(recorded) }]).then(() =>
            ended ? appendFinalArticleEvent(redis, redisPrefix, article.externalId, ended) : undefined,
          ),
        );
      }
    } else {
      for (const article of articles) {
        const ended = finalEventOf(article);
        if (!ended) continue;
        writes.push(appendFinalArticleEvent(redis, redisPrefix, article.externalId, ended));
        if (req.method.name === "CancelArticle") writes.push(redis.publish(articleCancelsChannel(redisPrefix), article.externalId));
      }
    }
    if (writes.length > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("timed out")), WRITE_TIMEOUT_MS)));
      await Promise.race([Promise.all(writes), timeout])
        .catch((error) => logger.warn("could not log the end of an article", { externalIds: articles.map((a) => a.externalId), error: (error as Error).message }))
        .finally(() => clearTimeout(timer));
    }
    return res;
  };
}
