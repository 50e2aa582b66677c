// Redis connections of the deployment. Every key and queue lives under REDIS_PREFIX so two
// stacks can share one Redis.
import IORedis, { type RedisOptions } from "ioredis";

export function connectRedis(redisUrl: string, options: RedisOptions = {}): IORedis {
  const redis = new IORedis(redisUrl, { maxRetriesPerRequest: null, enableReadyCheck: true, lazyConnect: false, ...options });
  // ioredis reconnects by itself and commands fail with their own errors; a lost connection is
  // reported once per outage by the process's dependency watch, not by every retry of every connection.
  redis.on("error", () => {});
  return redis;
}

/** BullMQ's prefix option: queues become `<prefix>:bull:<queue>:…`. */
export const queuePrefix = (redisPrefix: string) => `${redisPrefix}:bull`;

export const redisKey = (redisPrefix: string, ...parts: (string | number)[]) => [redisPrefix, ...parts].join(":");

/**
 * A key whose `id` is its Redis Cluster hash tag: every key made from it by a suffix stays in one
 * hash slot, so a script or a multi-key command over them also runs on a cluster (no CROSSSLOT).
 */
export const slotKey = (redisPrefix: string, kind: string, id: string | number) => `${redisPrefix}:${kind}:{${id}}`;
