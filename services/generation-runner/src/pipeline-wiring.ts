// What a run is given (domain/pipeline-deps.ts), wired from the runner's settings, its service
// clients, queues and Redis connections: the worker (worker.ts) builds it once at start.
import { ArticleLifecycleService, ArticleStoreService } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { ArticleRevisionService } from "../../../proto/gen/articles/article_store/v1/revisions_pb.ts";
import { ArticleVersionService } from "../../../proto/gen/articles/article_store/v1/versions_pb.ts";
import { QuotaService } from "../../../proto/gen/articles/accounts_billing/v1/quota_pb.ts";
import { WorkflowSnapshotService } from "../../../proto/gen/articles/workflow_catalog/v1/snapshots_pb.ts";
import { serviceClient } from "../../kit/src/clients.ts";
import { publishingJobId, type PublishingJob, type WebhookJob } from "../../kit/src/queues.ts";
import type { RedisConnection } from "../../kit/src/redis.ts";
import { currentRequestId } from "../../kit/src/request-context.ts";
import type { ServiceContext } from "../../kit/src/service-process.ts";
import { currentTraceparent } from "../../kit/src/tracing.ts";
import type { Queue } from "bullmq";
import type { RunnerConfig } from "./config.ts";
import type { schema } from "./db/client.ts";
import { articleReader } from "./domain/article-reads.ts";
import { ImageStores } from "./domain/image-store.ts";
import type { Pacer } from "./domain/paced-call.ts";
import { PinnedSnapshotMemory } from "./domain/pinned-snapshots.ts";
import type { PipelineDeps } from "./domain/pipeline.ts";
import { pacedSearch } from "./research/paced-search.ts";
import { checkStoredVersion } from "./rpc-originality.ts";

/** The clients of the other services a run calls. */
export function runnerClients({ config, credential }: ServiceContext<typeof schema>) {
  const via = (baseUrl: string) => ({ baseUrl, credential, timeoutMs: 15_000 });
  return {
    articles: serviceClient(ArticleStoreService, via(config.services.articleStore)),
    versions: serviceClient(ArticleVersionService, via(config.services.articleStore)),
    lifecycle: serviceClient(ArticleLifecycleService, via(config.services.articleStore)),
    revisions: serviceClient(ArticleRevisionService, via(config.services.articleStore)),
    snapshots: serviceClient(WorkflowSnapshotService, via(config.services.workflowCatalog)),
    quota: serviceClient(QuotaService, via(config.services.accountsBilling)),
  };
}

export type RunnerClients = ReturnType<typeof runnerClients>;

export interface PipelineWiring {
  clients: RunnerClients;
  pacer: Pacer;
  webhooks: Queue<WebhookJob>;
  publications: Queue<PublishingJob>;
  /** The connection the run events leave on. */
  eventLog: RedisConnection;
  /** The account's weight in the fair turns (its plan's). */
  shareWeight: (account: string) => Promise<number>;
}

/** A job's trace and request id, carried to the jobs a run hands off. */
function carried() {
  const trace = currentTraceparent();
  const requestId = currentRequestId();
  return { ...(trace ? { trace } : {}), ...(requestId ? { requestId } : {}) };
}

export function pipelineDeps(ctx: ServiceContext<typeof schema>, runner: RunnerConfig, wiring: PipelineWiring): PipelineDeps {
  const { config, logger } = ctx;
  const { clients, pacer } = wiring;
  const readArticle = articleReader(clients.articles);
  return {
    db: ctx.database.db,
    logger,
    clients: runner.clients,
    pacer,
    articles: clients.articles,
    readArticle,
    lifecycle: clients.lifecycle,
    snapshots: new PinnedSnapshotMemory((pin) => clients.snapshots.getSnapshot(pin)),
    quota: clients.quota,
    async enqueueWebhook(job) {
      // One completion webhook per article: the job id is its external_id (BullMQ ids may not contain ":").
      await wiring.webhooks.add("deliver", { ...job, ...carried() }, { jobId: job.externalId });
    },
    async enqueuePublication(job) {
      await wiring.publications.add("publish", { ...job, ...carried() }, { jobId: publishingJobId(job) });
    },
    detector: runner.detector,
    research: runner.research && { ...runner.research, provider: pacedSearch(runner.research.provider, pacer, runner.searchRequestsPerMinute) },
    imageModel: runner.imageModel,
    imageStores: new ImageStores(ctx.database.db, runner.imageBucket),
    publicBaseUrl: runner.publicBaseUrl,
    batchPoll: { firstMs: runner.batchPollMs, maxMs: runner.batchPollMaxMs },
    progressKeepAliveMs: runner.progressKeepAliveMs,
    repairCalls: runner.repairCalls,
    eventLog: { redis: wiring.eventLog, redisPrefix: config.redisPrefix },
    shareWeight: wiring.shareWeight,
    revisions: clients.revisions,
    checkVersion: (externalId, number) => checkStoredVersion({ detector: runner.detector, versions: clients.versions, lifecycle: clients.lifecycle, readArticle }, externalId, number),
  };
}
