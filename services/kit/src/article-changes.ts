// Announcements that an article record changed, on a Redis channel under REDIS_PREFIX. article-store
// announces every committed change before it answers; gateways drop what they remember of the
// article when they hear it (gateway/src/articles/article-memory.ts).
import { redisKey, type RedisConnection } from "./redis.ts";

export const articleChangesChannel = (redisPrefix: string) => redisKey(redisPrefix, "article-changes");

export interface ChangedArticle {
  id: bigint;
  externalId: string;
}

export const announceArticleChange = (redis: RedisConnection, redisPrefix: string, article: ChangedArticle) =>
  redis.publish(articleChangesChannel(redisPrefix), `${article.id} ${article.externalId}`);

export function readArticleChange(message: string): ChangedArticle | undefined {
  const [id, externalId] = message.split(" ");
  return /^\d+$/.test(id ?? "") && externalId ? { id: BigInt(id), externalId } : undefined;
}
