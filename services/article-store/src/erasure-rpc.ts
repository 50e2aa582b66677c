// ArticleErasureService: an article's erasure in article-store, and after it commits, what Redis
// held of it: its event log's stream and the reconciler's note of its take-ups. The gateways are
// told it changed, so none answers it from memory. (A failure there is logged: the stream expires
// within a week, the note within hours, and the gateways forget within a second anyway.)
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { ArticleErasureService, type EraseArticleRequest, type EraseArticleResponse } from "../../../proto/gen/articles/article_store/v1/erasure_pb.ts";
import { announceArticleChange } from "../../kit/src/article-changes.ts";
import { articleEventsKey } from "../../kit/src/article-events.ts";
import { notFound } from "../../kit/src/errors.ts";
import type { Logger } from "../../kit/src/logger.ts";
import { redisKey, type RedisConnection } from "../../kit/src/redis.ts";
import type { Db } from "./db/client.ts";
import { eraseArticle, findErasure, type ErasureRecord } from "./domain/article-erasure.ts";

const erasureMessage = (e: ErasureRecord) => ({
  articleId: BigInt(e.articleId),
  accountId: BigInt(e.accountId),
  projectId: BigInt(e.projectId),
  wordsBilled: BigInt(e.wordsBilled),
  erasedAt: timestampFromDate(e.erasedAt),
  erasedByKeyId: e.erasedByKeyId === null ? undefined : BigInt(e.erasedByKeyId),
});

export function articleErasureRoutes(router: ConnectRouter, db: Db): void {
  router.service(ArticleErasureService, {
    eraseArticle: async (req) => ({ erasure: erasureMessage(await eraseArticle(db, req.externalId, Number(req.wordsBilled), Number(req.keyId))) }),
    async findErasure(req) {
      const erasure = await findErasure(db, req.identifier);
      if (!erasure) throw notFound("No such erased article.");
      return { erasure: erasureMessage(erasure) };
    },
  });
}

export function forgetErasedInRedis(redis: RedisConnection, redisPrefix: string, logger: Logger): Interceptor {
  return (next) => async (req) => {
    const res = await next(req);
    if (req.service.typeName !== ArticleErasureService.typeName || req.method.name !== ArticleErasureService.method.eraseArticle.name || res.stream) return res;
    const externalId = (req.message as unknown as EraseArticleRequest).externalId.toLowerCase();
    const { erasure } = res.message as unknown as EraseArticleResponse;
    await Promise.all([
      redis.del(articleEventsKey(redis, redisPrefix, externalId)),
      redis.del(redisKey(redisPrefix, "reconciler", "taken", externalId)),
      announceArticleChange(redis, redisPrefix, { id: erasure!.articleId, externalId }),
    ]).catch((error) => logger.warn("could not forget an erased article in Redis", { error: (error as Error).message }));
    return res;
  };
}
