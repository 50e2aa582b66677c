// Announces each article change made through the lifecycle contract (changed-articles.ts says
// which) before the call returns, so a caller that then reads through any gateway sees the
// change. A failed announcement is logged, never fails the committed change: gateways forget
// what they remember within a second anyway.
import type { RedisConnection } from "../../kit/src/redis.ts";
import type { Interceptor } from "@connectrpc/connect";
import { ArticleLifecycleService } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { VERSION_CHANGES } from "./version-events.ts";
import { ArticleRetryService } from "../../../proto/gen/articles/article_store/v1/retry_pb.ts";
import { announceArticleChange } from "../../kit/src/article-changes.ts";
import type { Logger } from "../../kit/src/logger.ts";
import { changedArticles } from "./changed-articles.ts";
import { within } from "../../kit/src/deadline.ts";

const ANNOUNCE_TIMEOUT_MS = 250;

/** Every lifecycle call, a retry, and the calls that add a version after generation (reads change nothing). */
const announces = (service: string, method: string) =>
  service === ArticleLifecycleService.typeName || service === ArticleRetryService.typeName || VERSION_CHANGES.has(`${service}/${method}`);

export function announceArticleChanges(redis: RedisConnection, redisPrefix: string, logger: Logger): Interceptor {
  return (next) => async (req) => {
    const res = await next(req);
    if (!announces(req.service.typeName, req.method.name) || res.stream) return res;
    const articles = changedArticles(res.message, req.contextValues);
    if (articles.length > 0) {
      // Bounded: with Redis away the change still answers at once (gateways are not listening then).
      await within(Promise.all(articles.map((article) => announceArticleChange(redis, redisPrefix, article))), ANNOUNCE_TIMEOUT_MS).catch((error) =>
        logger.warn("could not announce an article change", { externalIds: articles.map((a) => a.externalId), error: (error as Error).message }),
      );
    }
    return res;
  };
}
