// webhook-dispatcher process: completion webhooks off the `webhooks` queue (deliveries, retries,
// the delivery log, published status), publications to WordPress and Ghost off the `publishing`
// queue, per-project signing secrets and publishing destinations over gRPC.
import { fileURLToPath } from "node:url";
import { AccountsService } from "../../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import { ArticleLifecycleService, ArticleStoreService } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { ArticleImageService } from "../../../proto/gen/articles/generation_runner/v1/images_pb.ts";
import { serviceClient } from "../../kit/src/clients.ts";
import { openQueue, type PublishingJob, type WebhookJob } from "../../kit/src/queues.ts";
import { connectRedis, type RedisConnection } from "../../kit/src/redis.ts";
import { DeliveryErasureService } from "../../../proto/gen/articles/webhook_dispatcher/v1/erasure_pb.ts";
import { deliveryErasureHandlers } from "./delivery-erasure.ts";
import type { Queue } from "bullmq";
import { failOnConfigError, type ServiceUrls } from "../../kit/src/config.ts";
import type { Credential } from "../../kit/src/workload-identity.ts";
import { runService } from "../../kit/src/service-process.ts";
import { DELIVERY_TIMEOUT_MS, loadDispatcherSettings, type DispatcherSettings } from "./config.ts";
import { schema } from "./db/client.ts";
import { startDeliveryWorker } from "./delivery-worker.ts";
import { projectName } from "./domain/completion-delivery.ts";
import { ProjectNames } from "./domain/project-names.ts";
import { webhookDispatcherRoutes } from "./rpc.ts";
import { publishingRoutes } from "./publishing-rpc.ts";
import { startPublishingWorker } from "./publishing-worker.ts";
import { guardedFetch } from "./publishing/guarded-fetch.ts";
import { webhookDispatcherAccess } from "./access.ts";
import { endpointRoutes } from "./endpoints-rpc.ts";
import { startEndpointWorkers } from "./endpoint-worker.ts";
import type { EndpointDeliveryJob } from "../../kit/src/queues.ts";

// Read when the service starts (routes come first), not when the module loads: the release's
// migration Job runs this file with `--migrate` and nothing but DATABASE_URL.
let settings: DispatcherSettings;

function connectServices(urls: ServiceUrls, credential: Credential) {
  const via = (baseUrl: string) => ({ baseUrl, credential, timeoutMs: 10_000 });
  return {
    articles: serviceClient(ArticleStoreService, via(urls.articleStore)),
    lifecycle: serviceClient(ArticleLifecycleService, via(urls.articleStore)),
    accounts: serviceClient(AccountsService, via(urls.accountsBilling)),
    // Image bytes are larger than the other answers: a longer deadline of their own.
    images: serviceClient(ArticleImageService, { ...via(urls.generationRunner), timeoutMs: 30_000 }),
  };
}
// Made with the process's own credential when the service starts (routes come first).
let services: ReturnType<typeof connectServices>;
// The RPC handlers' queues (publish requests, an erased article's queued jobs looked for, test
// events and redeliveries), on one Redis connection opened on first use.
let handlersRedis: RedisConnection | undefined;
let publishingQueue: Queue<PublishingJob> | undefined;
let webhooksQueue: Queue<WebhookJob> | undefined;
let endpointDeliveries: Queue<EndpointDeliveryJob> | undefined;

await runService({
  name: "webhook-dispatcher",
  urlKey: "webhookDispatcher",
  schemaName: "webhook_dispatcher",
  schema,
  migrationsFolder: fileURLToPath(new URL("./db/migrations", import.meta.url)),
  usesRedis: true,
  access: webhookDispatcherAccess,
  routes: ({ database, config, credential, logger }) => {
    settings = failOnConfigError(() => loadDispatcherSettings(process.env));
    const redis = () => (handlersRedis ??= connectRedis(config.redisUrl));
    const publishingJobs = () => (publishingQueue ??= openQueue<PublishingJob>("publishing", redis(), config.redisPrefix));
    services = connectServices(config.services, credential);
    const signing = webhookDispatcherRoutes(database.db, settings.secretKey, services.accounts);
    const publishing = publishingRoutes({
      db: database.db,
      secretKey: settings.secretKey,
      accounts: services.accounts,
      articles: services.articles,
      lifecycle: services.lifecycle,
      queue: publishingJobs,
      fetch: guardedFetch({ allowPrivate: settings.allowPrivateUrls, logger }),
      allowPlainHttp: settings.allowPrivateUrls,
    });
    const erasure = deliveryErasureHandlers(database.db, () => ({
      redis: redis(),
      webhooks: (webhooksQueue ??= openQueue<WebhookJob>("webhooks", redis(), config.redisPrefix)),
      publishing: publishingJobs(),
    }), { secretKey: settings.secretKey, fetch: guardedFetch({ allowPrivate: settings.allowPrivateUrls, logger }) });
    const endpoints = endpointRoutes({
      db: database.db,
      secretKey: settings.secretKey,
      redis,
      redisPrefix: config.redisPrefix,
      deliveries: () => (endpointDeliveries ??= openQueue<EndpointDeliveryJob>("endpoint-deliveries", redis(), config.redisPrefix)),
      logger,
    });
    return (router) => {
      signing(router);
      endpoints(router);
      publishing(router);
      router.service(DeliveryErasureService, erasure);
    };
  },
  async background({ database, config, logger }) {
    if (settings.allowPrivateUrls) logger.warn("ALLOW_PRIVATE_URLS=true: webhooks and publications may reach private and loopback addresses");
    const stopPublishing = startPublishingWorker({
      context: {
        db: database.db,
        services,
        secretKey: settings.secretKey,
        attempts: settings.publishAttempts,
        backoffMs: settings.publishBackoffMs,
        fetch: guardedFetch({ allowPrivate: settings.allowPrivateUrls, logger }),
      },
      redisUrl: config.redisUrl,
      redisPrefix: config.redisPrefix,
      concurrency: settings.publishConcurrency,
      lockDurationMs: settings.lockDurationMs,
      logger,
    });
    const stopDeliveries = startDeliveryWorker({
      context: {
        db: database.db,
        services,
        projectNames: new ProjectNames((projectId) => projectName(services, projectId)),
        policy: {
          attempts: settings.attempts,
          backoffMs: settings.backoffMs,
          allowPrivate: settings.allowPrivateUrls,
          timeoutMs: DELIVERY_TIMEOUT_MS,
          logger,
          secretKey: settings.secretKey,
        },
      },
      redisUrl: config.redisUrl,
      redisPrefix: config.redisPrefix,
      concurrency: settings.concurrency,
      lockDurationMs: settings.lockDurationMs,
      logger,
    });
    const stopEndpoints = startEndpointWorkers({
      db: database.db,
      policy: { attempts: settings.attempts, backoffMs: settings.backoffMs, allowPrivate: settings.allowPrivateUrls, timeoutMs: DELIVERY_TIMEOUT_MS, logger, secretKey: settings.secretKey },
      redisUrl: config.redisUrl,
      redisPrefix: config.redisPrefix,
      concurrency: settings.concurrency,
      logger,
    });
    return async () => {
      await Promise.all([stopPublishing(), stopDeliveries(), stopEndpoints()]);
      await Promise.all([publishingQueue?.close(), webhooksQueue?.close(), endpointDeliveries?.close()]);
      handlersRedis?.disconnect();
    };
  },
});
