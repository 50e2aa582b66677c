// One pickup of an article's run as its stages share it (pipeline.ts opens it, run-steps.ts writes
// the workflow's steps, run-completion.ts polishes, completes and hands off): what was read when
// the run opened, the checkpoints so far, and the ways every stage reports and waits.
import type { Article } from "../../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import type { GetSnapshotResponse, SnapshotStep } from "../../../../proto/gen/articles/workflow_catalog/v1/snapshots_pb.ts";
import { temperatureForTone } from "../../../kit/src/rules/prompt-template.ts";
import { formatUsd } from "../../../kit/src/rules/usd.ts";
import type { Parking, WaitReason } from "../scheduler/index.ts";
import type { RunRow, StepCheckpoint } from "./checkpoints.ts";
import { citationStyleOf } from "./cited-writing.ts";
import type { CatalogModel } from "./model-catalog.ts";
import type { CallTurn } from "./model-call.ts";
import type { JobControl, PipelineDeps } from "./pipeline-deps.ts";
import type { ProgressReports } from "./progress-reports.ts";
import type { RunEvents } from "./run-events.ts";

export const DEFAULT_STEP_TIMEOUT_SECONDS = 300;

/** What opening the run read: the article, its pinned workflow, its models and the run's row. */
export interface OpenedRun {
  article: Article;
  settings: NonNullable<Article["settings"]>;
  snapshot: GetSnapshotResponse;
  /** The pinned steps in their order (never empty). */
  steps: SnapshotStep[];
  requested: CatalogModel;
  fallback?: CatalogModel;
  run: RunRow;
  /** What earlier pickups stored, and their cost. */
  checkpoints: Map<number, StepCheckpoint>;
  costSoFar: bigint;
}

export interface ArticleRun extends OpenedRun {
  externalId: string;
  job: JobControl;
  reports: ProgressReports;
  events: RunEvents;
  /** Each step's output, read back or written now. */
  outputs: Map<number, string>;
  /** Every checkpoint counted once: earlier pickups', plus each one stored in this pickup. */
  cost: bigint;
  temperature: number;
  turn: CallTurn;
  citations: ReturnType<typeof citationStyleOf>;
  /** Batch mode takes single-step workflows only (spec 4.1); creation enforces it. */
  batchMode: boolean;
  /** Given by the worker for live calls: a long wait parks the job (its reports in first). */
  parking?: Parking;
  /** ai_model_used: the model that produced the first step, once it has. */
  modelUsed(): string | undefined;
  progress(status: "writing" | "batching" | "polishing", currentStep: string): void;
  /** A step held up by its provider says so in the article's events and the runner's log. */
  onWait(step: string): (reason: WaitReason, model: string) => void;
  stopIfCancelled(): void;
  /** The step timeout of the last step, which the finishing calls take too. */
  finishingTimeoutMs: number;
}

/** A protobuf timestamp in ms since the epoch (now when absent). */
export function timestampMs(at: { seconds: bigint; nanos: number } | undefined): number {
  return at ? Number(at.seconds) * 1000 + Math.floor(at.nanos / 1e6) : Date.now();
}

export async function articleRun(deps: PipelineDeps, opened: OpenedRun, externalId: string, job: JobControl, reports: ProgressReports, events: RunEvents): Promise<ArticleRun> {
  const { article, settings, steps, checkpoints } = opened;
  const account = String(article.accountId);
  const run: ArticleRun = {
    ...opened,
    externalId,
    job,
    reports,
    events,
    outputs: new Map([...checkpoints].map(([n, cp]) => [n, cp.output])),
    cost: opened.costSoFar,
    temperature: temperatureForTone(article.tone),
    turn: { account, since: timestampMs(article.createdAt), weight: (await deps.shareWeight?.(account)) ?? 1 },
    citations: citationStyleOf(settings.citations),
    batchMode: settings.useBatchApi && steps.length === 1,
    parking: job.parking && {
      ...job.parking,
      // A parked job lets go once its progress is in: a later pickup reports for itself.
      park: async (ms, outage) => {
        await Promise.all([reports.flush(), events.flush()]);
        return job.parking!.park(ms, outage);
      },
    },
    modelUsed: () => checkpoints.get(steps[0]!.stepNumber)?.model,
    progress: (status, currentStep) => {
      events.state(status, currentStep, run.cost);
      reports.report({ status, currentStep, aiModelUsed: run.modelUsed(), cost: formatUsd(run.cost) });
    },
    onWait: (step) => (reason, model) => {
      events.waiting(step, reason, model);
      deps.logger.info("step waiting for its provider", { externalId, step, reason, model });
    },
    stopIfCancelled: () => job.signal?.throwIfAborted(),
    finishingTimeoutMs: (steps[steps.length - 1]!.timeoutSeconds || DEFAULT_STEP_TIMEOUT_SECONDS) * 1000,
  };
  return run;
}
