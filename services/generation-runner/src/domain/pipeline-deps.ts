// What one article's run (pipeline.ts) and a section revision's run (section-revision.ts) are
// given: the runner's clients and settings, and the job's controls. Apart from the pipeline so
// both runs read them without importing each other.
import type { Client } from "@connectrpc/connect";
import type { Article, ArticleLifecycleService, ArticleStoreService } from "../../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import type { ArticleRevisionService } from "../../../../proto/gen/articles/article_store/v1/revisions_pb.ts";
import type { QuotaService } from "../../../../proto/gen/articles/accounts_billing/v1/quota_pb.ts";
import type { GetSnapshotResponse } from "../../../../proto/gen/articles/workflow_catalog/v1/snapshots_pb.ts";
import type { Logger } from "../../../kit/src/logger.ts";
import type { PublishingJob, WebhookJob } from "../../../kit/src/queues.ts";
import type { Db } from "../db/client.ts";
import type { ResearchTools } from "../research/article-research.ts";
import type { ImageStores } from "./image-store.ts";
import type { Pacer } from "./paced-call.ts";
import type { Parking } from "../scheduler/index.ts";
import type { OriginalityDetector } from "./originality.ts";
import type { PinnedSnapshotMemory } from "./pinned-snapshots.ts";
import type { ModelClients } from "./providers.ts";
import type { ArticleEventLog } from "./run-events.ts";

export interface PipelineDeps {
  db: Db;
  logger: Logger;
  clients: ModelClients;
  /** Paces provider calls to their budgets, shared by every replica (paced-call.ts). */
  pacer: Pacer;
  articles: Client<typeof ArticleStoreService>;
  /** The article as the store has it now (undefined when unknown); reads of runs starting together share a call (article-reads.ts). */
  readArticle: (externalId: string) => Promise<Article | undefined>;
  lifecycle: Client<typeof ArticleLifecycleService>;
  /** Pinned snapshots from workflow-catalog, remembered per revision (they never change). */
  snapshots: PinnedSnapshotMemory<GetSnapshotResponse>;
  quota: Client<typeof QuotaService>;
  enqueueWebhook(job: WebhookJob): Promise<void>;
  /** Queues the publication an article asked for at creation (`publish`) once it completes. */
  enqueuePublication(job: PublishingJob): Promise<void>;
  detector: OriginalityDetector;
  research?: ResearchTools;
  imageModel: string;
  /** Where image bytes go (an S3-compatible bucket, else the runner's table). */
  imageStores: ImageStores;
  /** Where clients reach the gateway; image URLs in content start with it. */
  publicBaseUrl: string;
  batchPoll: { firstMs: number; maxMs: number };
  /** A run silent this long repeats its latest progress report (see ProgressReports); undefined: never. */
  progressKeepAliveMs?: number;
  /** The most repair calls an article gets for its failed brief checks (brief-repairs.ts); undefined: none. */
  repairCalls?: number;
  /** Where live watchers read the run's events (GET /v1/articles/{id}/events); undefined: not logged. */
  eventLog?: ArticleEventLog;
  /** The account's weight in the fair shares of the provider budgets (its plan's); 1 when undefined. */
  shareWeight?: (account: string) => Promise<number>;
  /** Section revisions of finished articles (section-revision.ts); undefined: none are run. */
  revisions?: Client<typeof ArticleRevisionService>;
  /** Scores a version made after generation and measures its brief checks (rpc-originality.ts); undefined: left unchecked. */
  checkVersion?: (externalId: string, number: number) => Promise<number>;
}

export interface JobControl {
  /** The job's last attempt: finishing touches then degrade instead of failing the article. */
  finalAttempt: boolean;
  /** Parks the job and resumes it after delayMs (batch polling); never returns. */
  resumeLater(delayMs: number): Promise<never>;
  /** Aborted when the article's client cancels it: the running model call stops, no later step starts. */
  signal?: AbortSignal;
  /** Parks the job while a live step's call waits long for its provider (parking.ts); undefined: calls wait in the job. */
  parking?: Parking;
  /** This pickup resumes a parked attempt: its step goes on, it is not tried again. */
  resumedFromPark?: boolean;
}
