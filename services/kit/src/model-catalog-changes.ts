// Announcements that the model catalog changed, on a Redis channel under REDIS_PREFIX. The
// catalog is generation-runner's: a runner announces every change it commits (an operator's
// add or update, the seed models it inserts at start) before it answers, and gateways drop what
// they remember of the catalog when they hear it (gateway/src/articles/model-memory.ts).
import { redisKey, type RedisConnection } from "./redis.ts";

/**
 * How old a runner's answer from the catalog is at most: a lookup that begins this long after a
 * change was committed sees it on every runner (generation-runner's catalog-memory.ts).
 */
export const CATALOG_ANSWER_AGE_MAX_MS = 500;

/** How long a gateway keeps a catalog answer at most without hearing of a change (one whose announcement was lost). */
export const CATALOG_UNANNOUNCED_FOLLOWED_MS = 10_000;

export const modelCatalogChangesChannel = (redisPrefix: string) => redisKey(redisPrefix, "model-catalog-changes");

export const announceModelCatalogChange = (redis: RedisConnection, redisPrefix: string) => redis.publish(modelCatalogChangesChannel(redisPrefix), "changed");
