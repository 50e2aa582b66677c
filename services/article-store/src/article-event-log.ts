// Writes the ends of an article's run to its event log (services/kit/src/article-events.ts):
// completed, published and failed, once each, after the lifecycle call committed them, and each
// recorded publication (a `publication` event, before the published it may bring); then moves
// the log to article-store's archive, letting Redis drop it (log-archiver.ts); and tells the
// runners when a client cancelled an article so the one working on it stops at once. Like the
// change announcements, a failure here is logged and never fails the committed change: a log
// left in Redis is archived by the hourly sweep.
import type { Interceptor } from "@connectrpc/connect";
import { ArticleLifecycleService, type Article, type RecordPublicationRequest } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { articleCancelsChannel, isCancelledArticle, type ArticleEvent } from "../../kit/src/article-events.ts";
import type { Logger } from "../../kit/src/logger.ts";
import { presentCost, presentPublication } from "../../kit/src/public-article.ts";
import { endedArticles } from "./changed-articles.ts";
import { appendToEndedLog, archiveArticleLogs, type LogArchive, type LoggedArticle } from "./log-archiver.ts";
import { within } from "../../kit/src/deadline.ts";

const WRITE_TIMEOUT_MS = 500;
// Reading the streams back, one insert and an expiry each: a few milliseconds, unless Postgres stalls.
const ARCHIVE_TIMEOUT_MS = 2_000;
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

export function logArticleEnds(archive: LogArchive, logger: Logger): Interceptor {
  const { redis, redisPrefix } = archive;
  return (next) => async (req) => {
    const res = await next(req);
    if (req.service.typeName !== ArticleLifecycleService.typeName || res.stream || !ENDING_METHODS.has(req.method.name)) return res;
    const articles = endedArticles(res.message, req.contextValues);
    const writes: Promise<unknown>[] = [];
    const logged: LoggedArticle[] = [];
    const giveUp = (article: Article) => (error: Error) => logger.warn("could not log the end of an article", { externalId: article.externalId, error: error.message });
    const append = (article: Article, event: ArticleEvent, unlessRepeated?: string) => appendToEndedLog(archive, loggedOf(article), [event], giveUp(article), unlessRepeated);
    if (req.method.name === "RecordPublication") {
      const asked = req.message as unknown as RecordPublicationRequest;
      const article = articles[0];
      const recorded = article?.publications.find((p) => p.destinationId === asked.publication?.destinationId);
      const ended = asked.markPublished && article ? finalEventOf(article) : undefined;
      // In order: the publication, then the published it brought.
      if (recorded && article) {
        writes.push(append(article, { event: "publication", data: presentPublication(recorded) }).then(() => (ended ? append(article, ended, ended.event) : undefined)));
        logged.push(loggedOf(article));
      }
    } else {
      for (const article of articles) {
        const ended = finalEventOf(article);
        if (!ended) continue;
        writes.push(append(article, ended, ended.event));
        logged.push(loggedOf(article));
        if (req.method.name === "CancelArticle") {
          writes.push(redis.publish(articleCancelsChannel(redisPrefix), article.externalId).catch((error) => logger.warn("could not announce a cancel", { externalId: article.externalId, error: (error as Error).message })));
        }
      }
    }
    if (writes.length === 0) return res;
    const externalIds = logged.map((a) => a.externalId);
    // The writes never reject (a write given up is reported by giveUp); past the timeout they go
    // on until they land, and the archive follows them.
    const written = Promise.all(writes);
    const archived = written.then(() =>
      within(archiveArticleLogs(archive, logged), ARCHIVE_TIMEOUT_MS).catch((error) =>
        logger.warn("could not archive the event log of an ended article; the hourly sweep will", { externalIds, error: (error as Error).message }),
      ),
    );
    try {
      await within(written, WRITE_TIMEOUT_MS);
    } catch {
      logger.warn("the end of an article is not in its log yet: tried again until it lands", { externalIds });
      return res;
    }
    await archived;
    return res;
  };
}

const loggedOf = (article: Article): LoggedArticle => ({ id: Number(article.id), externalId: article.externalId });
