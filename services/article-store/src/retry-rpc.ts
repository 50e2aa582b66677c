// ArticleRetryService: a failed article queued again (domain/article-retries.ts). Once committed,
// the outbox relay is woken (the job goes at once, not at the next poll) and a `retried` event,
// naming the failure it leaves behind, opens the new run's part of the article's log. Writing the
// event is bounded and a failure is logged, never failing the retry.
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ArticleSchema } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { ArticleRetryService, type RetryArticleResponse } from "../../../proto/gen/articles/article_store/v1/retry_pb.ts";
import type { Logger } from "../../kit/src/logger.ts";
import { within } from "../../kit/src/deadline.ts";
import type { Db } from "./db/client.ts";
import type { ArticleRecord } from "./domain/articles.ts";
import { retryArticle } from "./domain/article-retries.ts";
import { appendToEndedLog, type LogArchive } from "./log-archiver.ts";

const WRITE_TIMEOUT_MS = 2_000;

export function articleRetryRoutes(router: ConnectRouter, db: Db, articleMessage: (a: ArticleRecord) => MessageInitShape<typeof ArticleSchema>, wakeRelay: () => void): void {
  router.service(ArticleRetryService, {
    async retryArticle(req) {
      const retried = await retryArticle(db, req.externalId, req.stoppedAtStep || undefined);
      wakeRelay();
      return { article: articleMessage(retried.article), attempt: retried.attempt, previousReason: retried.previousReason ?? undefined, previousStep: retried.previousStep ?? undefined };
    },
  });
}

export function logRetries(archive: LogArchive, logger: Logger): Interceptor {
  return (next) => async (req) => {
    const res = await next(req);
    if (req.service.typeName !== ArticleRetryService.typeName || res.stream) return res;
    const retried = res.message as unknown as RetryArticleResponse;
    const article = retried.article!;
    const event = { event: "retried" as const, data: { status: article.status, attempt: retried.attempt, previous_reason: retried.previousReason ?? null, previous_step: retried.previousStep ?? null } };
    const giveUp = (error: Error) => logger.warn("could not log an article's retry", { externalId: article.externalId, error: error.message });
    // Not held up past the timeout: the write goes on until it lands.
    await within(appendToEndedLog(archive, { id: Number(article.id), externalId: article.externalId }, [event], giveUp), WRITE_TIMEOUT_MS).catch(() => undefined);
    return res;
  };
}
