// article-store process: articles, their versions and records over gRPC, the outbox relay
// that turns each created article into its generation job, the reconciler that hands an article
// whose job was lost back to its worker (and releases the words of a creation that died between
// reserving and creating), the folding of article counts, and the archive of ended articles'
// event logs (their upkeep: the hourly sweep and prune).
import { fileURLToPath } from "node:url";
import { AccountsService } from "../../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import { QuotaService } from "../../../proto/gen/articles/accounts_billing/v1/quota_pb.ts";
import { serviceClient } from "../../kit/src/clients.ts";
import { openQueue, type EndpointEventJob, type GenerationJob, type WebhookJob } from "../../kit/src/queues.ts";
import type { Queue } from "bullmq";
import { handOverEndpointEvents, HandoverCover, startEndpointEventBacklog, type EndpointEventHandover } from "./endpoint-event-handover.ts";
import { FairDispatch } from "../../kit/src/fair-dispatch.ts";
import { connectRedis, type RedisConnection } from "../../kit/src/redis.ts";
import { runService } from "../../kit/src/service-process.ts";
import { articleStoreAccess } from "./access.ts";
import { schema } from "./db/client.ts";
import { startOutboxRelay, type OutboxRelay } from "./outbox-relay.ts";
import { startChangeFolding } from "../../kit/src/change-folding.ts";
import { FOLD_BATCH, foldCountChanges } from "./domain/article-counts.ts";
import { startReconciler } from "./reconciler.ts";
import { articleStoreRoutes } from "./rpc.ts";
import { announceArticleChanges } from "./change-announcer.ts";
import { logArticleEnds } from "./article-event-log.ts";
import { logNewVersions } from "./version-events.ts";
import { forgetErasedInRedis } from "./erasure-rpc.ts";
import { logRetries } from "./retry-rpc.ts";
import { logRevisions } from "./revision-rpc.ts";
import { startLogArchiveUpkeep } from "./log-archiver.ts";
import { envInt, failOnConfigError, loadReconcileSettings, type PlatformConfig } from "../../kit/src/config.ts";
import type { Logger } from "../../kit/src/logger.ts";
import type { RedisOptions } from "ioredis";

const reconcile = failOnConfigError(() => loadReconcileSettings());
// How often the endpoint hand-over's background pass runs (its mark renewed, the backlog handed over).
const handoverPassMs = failOnConfigError(() => envInt(process.env, "ENDPOINT_HANDOVER_PASS_MS", 5_000, { min: 100, max: 60_000 }));

// The relay starts after the server (runService order); creations before that wait for its first pass.
let relay: OutboxRelay | undefined;
/** A Redis connection opened on first use, its errors logged. */
function lazyRedis(options: RedisOptions = {}) {
  let redis: RedisConnection | undefined;
  return {
    of(config: PlatformConfig, logger: Logger): RedisConnection {
      if (!redis) {
        redis = connectRedis(config.redisUrl, options);
        redis.on("error", (error) => logger.error("redis error", { error: error.message }));
      }
      return redis;
    },
    disconnect: () => redis?.disconnect(),
  };
}
// One connection for the queues (the outbox relay's and the reconciler's), the reconciler's own
// reads and the event logs' sweep.
const queues = lazyRedis();
// The announcements and event-log ends of a call go out on a connection of their own that sends
// the commands of one turn of the event loop in one write: a batch call (RecordDeliveries) ends
// dozens of articles at once, a publish and a script each.
const announcements = lazyRedis({ enableAutoPipelining: true });
// Article events for the projects' webhook endpoints, their queue opened on first use.
let endpointEvents: Queue<EndpointEventJob> | undefined;
// The calls this replica is handing over: the interceptor adds them, the background pass marks how far they are done.
const handoverCover = new HandoverCover();
const endpointHandover = (db: EndpointEventHandover["db"], config: PlatformConfig, logger: Logger): EndpointEventHandover => ({
  db,
  redis: announcements.of(config, logger),
  redisPrefix: config.redisPrefix,
  queue: () => (endpointEvents ??= openQueue<EndpointEventJob>("endpoint-events", queues.of(config, logger), config.redisPrefix)),
  cover: handoverCover,
});

await runService({
  name: "article-store",
  urlKey: "articleStore",
  schemaName: "article_store",
  schema,
  migrationsFolder: fileURLToPath(new URL("./db/migrations", import.meta.url)),
  usesRedis: true,
  access: articleStoreAccess,
  routes: ({ database, config, credential }) =>
    articleStoreRoutes({
      db: database.db,
      accounts: serviceClient(AccountsService, { baseUrl: config.services.accountsBilling, credential }),
      relay: () => relay,
    }),
  interceptors: ({ config, database, logger }) => [
    announceArticleChanges(announcements.of(config, logger), config.redisPrefix, logger),
    logArticleEnds({ db: database.db, redis: announcements.of(config, logger), redisPrefix: config.redisPrefix }, logger),
    logNewVersions({ db: database.db, redis: announcements.of(config, logger), redisPrefix: config.redisPrefix }, logger),
    forgetErasedInRedis(announcements.of(config, logger), config.redisPrefix, logger),
    logRetries({ db: database.db, redis: announcements.of(config, logger), redisPrefix: config.redisPrefix }, logger),
    handOverEndpointEvents(endpointHandover(database.db, config, logger), logger),
    logRevisions({ db: database.db, redis: announcements.of(config, logger), redisPrefix: config.redisPrefix }, logger),
  ],
  async background({ database, config, credential, logger }) {
    const generationQueue = openQueue<GenerationJob>("generation", queues.of(config, logger), config.redisPrefix);
    const dispatch = new FairDispatch(queues.of(config, logger), generationQueue);
    relay = startOutboxRelay({ db: database.db, dispatch, logger });
    const folding = startChangeFolding({ what: "article count", fold: () => foldCountChanges(database.db), batch: FOLD_BATCH, logger });
    const webhookQueue = openQueue<WebhookJob>("webhooks", queues.of(config, logger), config.redisPrefix);
    const quota = serviceClient(QuotaService, { baseUrl: config.services.accountsBilling, credential });
    const reconciler = startReconciler({ db: database.db, redis: queues.of(config, logger), redisPrefix: config.redisPrefix, generationQueue, dispatch, webhookQueue, quota, logger, settings: reconcile });
    const logUpkeep = startLogArchiveUpkeep({ db: database.db, redis: queues.of(config, logger), redisPrefix: config.redisPrefix, logger });
    const endpointBacklog = startEndpointEventBacklog(endpointHandover(database.db, config, logger), logger, handoverPassMs);
    return async () => {
      await endpointBacklog.stop();
      await logUpkeep.stop();
      await reconciler.stop();
      await folding.stop();
      await relay?.stop();
      await generationQueue.close();
      await webhookQueue.close();
      await endpointEvents?.close();
      queues.disconnect();
      announcements.disconnect();
    };
  },
});
