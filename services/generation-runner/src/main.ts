// generation-runner process: the model catalog over gRPC and the BullMQ worker that generates
// articles step by step.
import { fileURLToPath } from "node:url";
import { failOnConfigError } from "../../kit/src/config.ts";
import { runService } from "../../kit/src/service-process.ts";
import { schema } from "./db/client.ts";
import { loadRunnerConfig } from "./config.ts";
import { ImageStores } from "./domain/image-store.ts";
import { ensureSeedModels, seedModels } from "./domain/model-catalog.ts";
import { generationRunnerRoutes } from "./rpc.ts";
import { generationRunnerAccess } from "./access.ts";
import { startGenerationWorker } from "./worker.ts";
import { originalityCheckHandlers } from "./rpc-originality.ts";
import { runErasureHandlers } from "./rpc-erasure.ts";
import { RunErasureService } from "../../../proto/gen/articles/generation_runner/v1/erasure_pb.ts";
import { openQueue, type GenerationJob } from "../../kit/src/queues.ts";
import { connectRedis, type RedisConnection } from "../../kit/src/redis.ts";
import { announceModelCatalogChange, CATALOG_UNANNOUNCED_FOLLOWED_MS } from "../../kit/src/model-catalog-changes.ts";
import { Code, ConnectError } from "@connectrpc/connect";
import { within } from "../../kit/src/deadline.ts";
import type { Queue } from "bullmq";
import { serviceClient } from "../../kit/src/clients.ts";
import { ArticleLifecycleService, ArticleStoreService } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { articleReader } from "./domain/article-reads.ts";
import { ArticleVersionService } from "../../../proto/gen/articles/article_store/v1/versions_pb.ts";
import { OriginalityCheckService } from "../../../proto/gen/articles/generation_runner/v1/originality_pb.ts";

const runner = failOnConfigError(() => loadRunnerConfig());
const ANNOUNCE_TIMEOUT_MS = 2_000;
// The connection the calls' own work in Redis uses (catalog announcements, erasures' queue), opened on first use.
let callsRedis: RedisConnection | undefined;
const redisOfCalls = (url: string) => (callsRedis ??= connectRedis(url));
// The generation queue as erasures see it (a waiting job of an erased article is removed), opened on first use.
let erasureQueue: { queue: Queue<GenerationJob>; redis: RedisConnection } | undefined;
const queueOn = (redis: RedisConnection, redisPrefix: string) => ({ queue: openQueue<GenerationJob>("generation", redis, redisPrefix), redis });

await runService({
  name: "generation-runner",
  urlKey: "generationRunner",
  schemaName: "generation_runner",
  schema,
  migrationsFolder: fileURLToPath(new URL("./db/migrations", import.meta.url)),
  usesRedis: true,
  access: generationRunnerAccess,
  routes: ({ database, logger, config, credential }) => {
    const announceChange = async () => {
      try {
        // Bounded: a connection waiting for Redis holds its commands for as long as it is away.
        await within(announceModelCatalogChange(redisOfCalls(config.redisUrl), config.redisPrefix), ANNOUNCE_TIMEOUT_MS);
      } catch (error) {
        // Gateways keep an answer a few seconds at most without hearing of a change: repeating the call announces it.
        logger.warn("could not announce a model catalog change", { error: (error as Error).message });
        const seconds = CATALOG_UNANNOUNCED_FOLLOWED_MS / 1000;
        throw new ConnectError(`The change is saved, but the gateways could not be told of it (Redis): repeat the call, or they follow it within ${seconds} seconds.`, Code.Unavailable);
      }
    };
    // Seeded as the server comes up; catalog calls wait for it, so the first article never
    // finds an empty catalog.
    const seeded = ensureSeedModels(database.db, seedModels({ simulator: runner.clients.providers.has("simulator"), openai: runner.realOpenAi })).then((count) => {
      if (count > 0) {
        logger.info("seeded the model catalog", { models: count });
        // Catalog calls do not wait for it: a gateway that misses it follows within seconds.
        void announceChange().catch(() => {});
      }
      logger.info("model providers", { providers: [...runner.clients.providers.keys()] });
    });
    // A runner without its catalog cannot serve: say why and stop, rather than fail every call.
    seeded.catch((error) => {
      console.error(`generation-runner: cannot seed the model catalog (${(error as Error).message})`);
      process.exit(1);
    });
    const stores = new ImageStores(database.db, runner.imageBucket);
    const catalogAndRuns = generationRunnerRoutes(database.db, (id) => runner.clients.isConfigured(id), seeded, { stores, publicBaseUrl: runner.publicBaseUrl }, announceChange);
    // Edited versions are scored on request (the gateway asks after an edit).
    const articleStore = { baseUrl: config.services.articleStore, credential };
    const checks = originalityCheckHandlers({
      detector: runner.detector,
      versions: serviceClient(ArticleVersionService, articleStore),
      lifecycle: serviceClient(ArticleLifecycleService, articleStore),
      readArticle: articleReader(serviceClient(ArticleStoreService, articleStore)),
    });
    return (router) => {
      catalogAndRuns(router);
      router.service(OriginalityCheckService, checks);
      router.service(RunErasureService, runErasureHandlers(database.db, stores, () => (erasureQueue ??= queueOn(redisOfCalls(config.redisUrl), config.redisPrefix))));
    };
  },
  background: (ctx) => startGenerationWorker(ctx, runner),
});
