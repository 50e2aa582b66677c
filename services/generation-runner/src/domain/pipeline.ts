// One article's run: opened from the article and its pinned workflow (here), its steps written in
// order and checkpointed (run-steps.ts), then polished, completed and handed off
// (run-completion.ts). Every stage can be repeated after a crash: finished work is read back from
// checkpoints, and the article-store, quota and queue calls are idempotent.
import { Code, ConnectError } from "@connectrpc/connect";
import type { Article } from "../../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import type { Db } from "../db/client.ts";
import { findRun, openedNow, pickUpRun, runCost, stepCheckpointsOf, updateRun, type RunRow, type StepCheckpoint } from "./checkpoints.ts";
import { findModelAndFallback, type CatalogModel } from "./model-catalog.ts";
import { ProgressReports } from "./progress-reports.ts";
import { checkVersionOriginality } from "./version-originality.ts";
import { isCancelledArticle } from "../../../kit/src/article-events.ts";
import { ArticleCancelled } from "./cancellation.ts";
import { RunEvents } from "./run-events.ts";
import { runSectionRevision, type RevisionOutcome } from "./section-revision.ts";
import { articleRun, type OpenedRun } from "./article-run.ts";
import { writeSteps } from "./run-steps.ts";
import { completeRun } from "./run-completion.ts";
import type { JobControl, PipelineDeps } from "./pipeline-deps.ts";

export type { JobControl, PipelineDeps } from "./pipeline-deps.ts";
export { timestampMs } from "./article-run.ts";

/** The article cannot run at all (no model, empty snapshot): retrying would not help. */
export class ArticleCannotRun extends Error {
  override readonly name = "ArticleCannotRun";
}

export type RunOutcome = "completed" | "skipped" | RevisionOutcome;

const TERMINAL = new Set(["completed", "published"]);

async function pinnedSnapshot(deps: PipelineDeps, workflowId: bigint, revision: number, articleType: string) {
  try {
    return await deps.snapshots.get({ workflowId, revision, articleType });
  } catch (error) {
    if (error instanceof ConnectError && error.code === Code.NotFound) {
      throw new ArticleCannotRun(`the pinned workflow ${articleType} (revision ${revision}) no longer exists`);
    }
    throw error;
  }
}

/** What earlier pickups of the run stored; a run opened only now has none (checkpoints follow its opening). */
async function earlierWork(db: Db, run: RunRow) {
  if (openedNow(run)) return { checkpoints: new Map<number, StepCheckpoint>(), costSoFar: 0n };
  const [checkpoints, costSoFar] = await Promise.all([stepCheckpointsOf(db, run.externalId), runCost(db, run.externalId)]);
  return { checkpoints, costSoFar };
}

async function catalogModels(db: Db, id: string): Promise<{ requested: CatalogModel; fallback?: CatalogModel }> {
  const { model, fallback } = await findModelAndFallback(db, id);
  if (!model) throw new ArticleCannotRun(`model "${id}" is not in the catalog`);
  return { requested: model, fallback };
}

/** Runs the article; `known` is the article as just read, when the caller has it. */
export async function generateArticle(deps: PipelineDeps, externalId: string, job: JobControl, known?: Article): Promise<RunOutcome> {
  const reports = new ProgressReports((report) => deps.lifecycle.recordProgress({ externalId, ...report }), undefined, deps.progressKeepAliveMs);
  const events = new RunEvents(deps.eventLog, externalId, deps.logger);
  try {
    return await runArticle(deps, externalId, job, reports, events, known);
  } catch (error) {
    // The worker then fails, parks or retries the article; its log has what the run did first.
    await events.landed();
    throw error;
  } finally {
    // A run that ends (or parks) sends nothing more: a later pickup reports for itself.
    reports.stop();
  }
}

/**
 * A finished article with no run left to finish may still be owed its originality check (a run
 * that died after completing, an edit whose check request was lost, one written before scores went
 * with versions): its current version is checked now, so the reconciler stops taking it up.
 * Otherwise there is nothing to do.
 */
async function checkOwedOriginality(deps: PipelineDeps, article: Article): Promise<RunOutcome> {
  if (TERMINAL.has(article.status) && !article.originalityCheckedAt && article.currentVersionId !== undefined && article.content !== undefined) {
    const text = { content: article.content, words: article.actualWordCount, sources: article.sources, removed: article.citationsRemoved };
    await checkVersionOriginality(deps, article.externalId, article, { id: article.currentVersionId, text, description: article.description ?? null, hasQuality: article.quality !== undefined });
    deps.logger.info("owed originality check made", { externalId: article.externalId, versionId: Number(article.currentVersionId) });
  }
  return "skipped";
}

async function runArticle(deps: PipelineDeps, externalId: string, job: JobControl, reports: ProgressReports, events: RunEvents, known?: Article): Promise<RunOutcome> {
  const opened = await openRun(deps, externalId, job, known);
  if (typeof opened === "string") return opened;
  const run = await articleRun(deps, opened, externalId, job, reports, events);
  await writeSteps(deps, run);
  await completeRun(deps, run);
  deps.logger.info("article completed", { externalId, steps: run.steps.length, humanized: run.article.humanize });
  return "completed";
}

/**
 * Reads what the run needs and opens its row (or picks up the row an earlier pickup opened), with
 * what earlier pickups stored; the outcome instead when the article has nothing left to write.
 */
async function openRun(deps: PipelineDeps, externalId: string, job: JobControl, known?: Article): Promise<OpenedRun | RunOutcome> {
  const { db } = deps;
  const article = known ?? (await deps.readArticle(externalId));
  if (!article) {
    deps.logger.warn("generation job for an unknown article dropped", { externalId });
    return "skipped";
  }
  if (!article.settings) throw new ArticleCannotRun(`article ${externalId} has no generation settings`);
  // Cancelled while the job waited: the worker settles what earlier pickups finished.
  if (isCancelledArticle(article)) throw new ArticleCancelled(externalId);
  if (article.status === "failed") return "skipped";
  // Terminal articles are skipped, unless this runner completed one and died before finishing
  // its hand-offs (settlement, webhook), which the idempotent tail (run-completion.ts) then completes.
  if (TERMINAL.has(article.status)) {
    // A finished article's job is queued again for a section revision (its own run, below the generation's).
    const revision = deps.revisions && (await deps.revisions.pendingRevision({ externalId })).revision;
    if (revision) return runSectionRevision({ ...deps, revisions: deps.revisions! }, article, revision, job);
    const earlier = await findRun(db, externalId);
    if (!earlier || earlier.finishedAt) return checkOwedOriginality(deps, article);
  }

  const settings = article.settings;
  // Independent reads go out together: each is a round trip the run would otherwise wait for in turn.
  const [snapshot, { requested, fallback }] = await Promise.all([
    pinnedSnapshot(deps, settings.workflowId, settings.workflowRevision, article.articleType),
    catalogModels(db, settings.model),
  ]);
  const steps = [...snapshot.steps].sort((a, b) => a.stepNumber - b.stepNumber);
  if (steps.length === 0) throw new ArticleCannotRun(`workflow ${article.articleType} revision ${settings.workflowRevision} has no steps`);
  const run = await pickUpRun(
    db,
    { externalId, workflowId: Number(settings.workflowId), workflowRevision: settings.workflowRevision, articleType: article.articleType, requestedModel: settings.model },
    steps[0]!,
  );
  if (run.finishedAt) {
    // Finished with its hand-offs by an earlier pickup.
    if (TERMINAL.has(article.status)) return "skipped";
    // A failed run retried (POST /v1/articles/{id}/retry): it goes on from its checkpoints.
    await updateRun(db, externalId, { finishedAt: null, lastError: null });
  }
  const { checkpoints, costSoFar } = await earlierWork(db, run);
  return { article, settings, snapshot, steps, requested, fallback, run, checkpoints, costSoFar };
}
