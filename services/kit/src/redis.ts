// Redis connections of the deployment. Every key and queue lives under REDIS_PREFIX so two
// stacks can share one Redis. REDIS_URL names one server (`redis://`, `rediss://`) or one node of
// a Redis Cluster (`redis+cluster://`, `rediss+cluster://`), from which the client learns the rest.
// Keys that one script or one multi-key command touches together share a hash tag (slotKey), so
// the same code runs on one server and on a cluster.
import type { EventEmitter } from "node:events";
import IORedis, { Cluster, type RedisOptions } from "ioredis";

/** A connection to the deployment's Redis: one server or a cluster. */
export type RedisConnection = IORedis | Cluster;

/** The schemes REDIS_URL may have. */
export const REDIS_URL_SCHEMES = ["redis:", "rediss:", "redis+cluster:", "rediss+cluster:"];

export const isClusterUrl = (redisUrl: string) => /^rediss?\+cluster:/.test(redisUrl);

export function connectRedis(redisUrl: string, options: RedisOptions = {}): RedisConnection {
  const serverOptions: RedisOptions = { maxRetriesPerRequest: null, enableReadyCheck: true, lazyConnect: false, ...options };
  const redis = isClusterUrl(redisUrl) ? connectCluster(redisUrl, serverOptions) : new IORedis(redisUrl, serverOptions);
  // ioredis reconnects by itself and commands fail with their own errors; a lost connection is
  // reported once per outage by the process's dependency watch, not by every retry of every connection.
  redis.on("error", () => {});
  return redis;
}

function connectCluster(redisUrl: string, options: RedisOptions): Cluster {
  const url = new URL(redisUrl.replace("+cluster", ""));
  const tls = url.protocol === "rediss:";
  const { enableAutoPipelining, enableOfflineQueue, lazyConnect, ...nodeOptions } = options;
  return new Cluster([{ host: url.hostname, port: Number(url.port || 6379) }], {
    enableAutoPipelining,
    enableOfflineQueue,
    lazyConnect,
    enableReadyCheck: options.enableReadyCheck,
    // A caller that gives up on a lost server gives up on the cluster too.
    ...(options.retryStrategy ? { clusterRetryStrategy: options.retryStrategy } : {}),
    // Managed clusters announce node addresses the certificate names: connect to them as given.
    ...(tls ? { dnsLookup: (address: string, callback: (error: null, address: string) => void) => callback(null, address) } : {}),
    redisOptions: {
      ...nodeOptions,
      username: decodeURIComponent(url.username) || undefined,
      password: decodeURIComponent(url.password) || undefined,
      ...(tls ? { tls: {} } : {}),
    },
  });
}

/** Another connection to the same Redis with other options (a blocking reader, a subscriber). */
export function duplicateConnection(redis: RedisConnection, options: RedisOptions): RedisConnection {
  if (!(redis instanceof Cluster)) return redis.duplicate(options);
  const { enableAutoPipelining, enableOfflineQueue, ...nodeOptions } = options;
  const clusterOptions = { ...redis.options, redisOptions: { ...redis.options.redisOptions, ...nodeOptions } };
  if (enableAutoPipelining !== undefined) clusterOptions.enableAutoPipelining = enableAutoPipelining;
  if (enableOfflineQueue !== undefined) clusterOptions.enableOfflineQueue = enableOfflineQueue;
  return redis.duplicate(undefined, clusterOptions);
}

/** Reports a connection's errors (a server or a cluster's). */
export const onRedisError = (redis: RedisConnection, report: (error: Error) => void) => void (redis as EventEmitter).on("error", report);

export const isCluster = (redis: unknown): redis is Cluster => redis instanceof Cluster;

// Answers a server gives while it cannot serve for now: a cluster between masters (a failover),
// a replica not yet promoted, a server loading its data.
const PASSING_REFUSALS = /^(CLUSTERDOWN|TRYAGAIN|MASTERDOWN|READONLY|LOADING|BUSY)\b/;

/**
 * Whether a failed command means Redis is away for now (no answer, or a refusal that passes with
 * a failover), rather than a defect of the command itself (any other answer refusing it).
 */
export const isRedisAway = (error: unknown): boolean => (error as Error).name !== "ReplyError" || PASSING_REFUSALS.test((error as Error).message);

/** A key's Redis Cluster hash tag (`{…}`), or the whole key when it has none. */
export function hashTagOf(key: string): string {
  const open = key.indexOf("{");
  const close = open < 0 ? -1 : key.indexOf("}", open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

/** The masters of a connection: itself for one server, every master of a cluster. */
export const mastersOf = (redis: RedisConnection): IORedis[] => (isCluster(redis) ? redis.nodes("master") : [redis]);

/**
 * BullMQ's prefix option: queues become `<prefix>:bull:<queue>:…` on one server, and
 * `<prefix>:{<prefix>:bull}:<queue>:…` on a cluster, whose hash tag keeps every key of the
 * deployment's queues in one slot, as BullMQ's scripts require. One server keeps the names it
 * always had, so jobs queued before an upgrade are found after it.
 */
export const queuePrefix = (redisPrefix: string, clustered: boolean) => (clustered ? `${redisPrefix}:{${redisPrefix}:bull}` : `${redisPrefix}:bull`);

export const redisKey = (redisPrefix: string, ...parts: (string | number)[]) => [redisPrefix, ...parts].join(":");

/**
 * A key whose `id` is its Redis Cluster hash tag: every key made from it by a suffix stays in one
 * hash slot, so a script or a multi-key command over them also runs on a cluster (no CROSSSLOT).
 */
export const slotKey = (redisPrefix: string, kind: string, id: string | number) => `${redisPrefix}:${kind}:{${id}}`;

/** Every key of the deployment matching `pattern` (under its prefix), on every master. */
export async function* scanKeys(redis: RedisConnection, pattern: string, count = 500): AsyncGenerator<string[]> {
  for (const master of mastersOf(redis)) {
    let cursor = "0";
    do {
      const [next, keys] = await master.scan(cursor, "MATCH", pattern, "COUNT", count);
      if (keys.length > 0) yield keys;
      cursor = next;
    } while (cursor !== "0");
  }
}
