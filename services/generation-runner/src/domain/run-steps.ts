// The workflow's steps of a run, in order: each rendered from the article and the earlier steps'
// outputs, called (live, or through the provider's batch API) and checkpointed before the next, so
// a later pickup goes on from the first step without a checkpoint.
import type { SnapshotStep } from "../../../../proto/gen/articles/workflow_catalog/v1/snapshots_pb.ts";
import { renderTemplate, type StepFlags } from "../../../kit/src/rules/prompt-template.ts";
import { stepDuration } from "../../../kit/src/metrics.ts";
import { articleResearch, researchText } from "../research/article-research.ts";
import { DEFAULT_STEP_TIMEOUT_SECONDS, type ArticleRun } from "./article-run.ts";
import { advanceBatch } from "./batch-mode.ts";
import { openedNow, researchOf, saveStepCheckpoint, type RunRow, type StepCheckpoint, type StepStart, type StoredResearch } from "./checkpoints.ts";
import { promptWithCitations, sourcesText, writesArticleText } from "./cited-writing.ts";
import type { CatalogModel } from "./model-catalog.ts";
import { callModel, StepFailure, type ChatRequest } from "./model-call.ts";
import type { JobControl, PipelineDeps } from "./pipeline-deps.ts";
import { recordStepStart } from "./step-attempts.ts";
import { requirementsOf, templateValues, type RunContext } from "./step-values.ts";

const liveSteps = stepDuration.labels("live");
const batchSteps = stepDuration.labels("batch");

const flagsOf = (s: SnapshotStep): StepFlags => ({
  include_additional_context: s.includeAdditionalContext,
  include_additional_instruction: s.includeAdditionalInstruction,
  include_requirements: s.includeRequirements,
  include_research: s.includeResearch,
  include_outline: s.includeOutline,
});

/** Writes every step without a checkpoint, in order; each checkpoint lands in `run`. */
export async function writeSteps(deps: PipelineDeps, run: ArticleRun): Promise<void> {
  const pending = run.steps.filter((s) => !run.checkpoints.has(s.stepNumber));
  if (pending.length === 0) return;
  const { ctx, research } = await runContext(deps, run, pending);
  for (const [i, step] of pending.entries()) await writeStep(deps, run, ctx, research, step, i === 0, pending[i + 1]);
}

/** What the prompts draw on besides the steps' outputs: the brief, the brand voice, the research. */
async function runContext(deps: PipelineDeps, run: ArticleRun, pending: SnapshotStep[]): Promise<{ ctx: RunContext; research?: StoredResearch }> {
  const { article, settings, externalId, events } = run;
  const brandVoice = settings.brandVoiceId ? (await deps.articles.getBrandVoice({ brandVoiceId: settings.brandVoiceId })).brandVoice : undefined;
  // Gathered before the first step that includes it; read back otherwise, so {requirements}
  // keeps the searchers' questions on every pickup.
  const research = !settings.researchEnabled
    ? undefined
    : pending.some((s) => s.includeResearch)
      ? await articleResearch(deps.db, deps.lifecycle, deps.research, article).then((kept) => (kept.sources.forEach((source) => events.source(source)), kept))
      : await researchOf(deps.db, externalId);
  const known = {
    article,
    settings,
    brandVoice: brandVoice ? { name: brandVoice.name, description: brandVoice.description } : null,
    research: researchText(research),
    sources: sourcesText(research),
    faqQuestions: research?.questions ?? [],
  };
  return { ctx: { ...known, requirements: requirementsOf(known) }, research };
}

async function writeStep(deps: PipelineDeps, run: ArticleRun, ctx: RunContext, research: StoredResearch | undefined, step: SnapshotStep, firstOfPickup: boolean, next: SnapshotStep | undefined): Promise<void> {
  const { externalId, steps, batchMode, job, events } = run;
  run.stopIfCancelled();
  run.progress(batchMode ? "batching" : "writing", step.stepName);
  // A batch parks the job between polls: the report must be in before the job lets go.
  if (batchMode) await run.reports.flush();
  const values = templateValues(ctx, steps, run.outputs);
  const flags = flagsOf(step);
  const user = renderTemplate(step.user, values, flags);
  const request: ChatRequest = {
    system: renderTemplate(step.system, values, flags),
    // Told to cite only when the article asked for citations: otherwise the prompt is as it always was.
    user: writesArticleText(step, steps) ? promptWithCitations(user, run.citations, research) : user,
    temperature: run.temperature,
    outputFormat: step.outputFormat,
    jsonSchema: step.jsonSchema,
    schemaName: `step_${step.stepNumber}`,
    timeoutMs: (step.timeoutSeconds || DEFAULT_STEP_TIMEOUT_SECONDS) * 1000,
    signal: job.signal,
    turn: run.turn,
    onWait: run.onWait(step.stepName),
    parking: batchMode ? undefined : run.parking,
  };
  events.stepStarted(step, run.requested.id);
  const stepStartedAt = performance.now();
  // The run's opening recorded a new run's first step start, each checkpoint the next step's;
  // a resumed run's first step is counted while its call runs (a batch counts its submission,
  // not each poll of it; a pickup after parking goes on with its attempt). Only bookkeeping: a
  // failure to record it is logged, not the step's.
  const started = !firstOfPickup || openedNow(run.run) || job.resumedFromPark || (batchMode && run.run.batchId)
    ? undefined
    : recordStepStart(deps.db, externalId, step).catch((error) => deps.logger.warn("could not record a step start", { externalId, step: step.stepNumber, error: (error as Error).message }));
  let checkpoint: StepCheckpoint;
  try {
    checkpoint = batchMode ? await batchedStep(deps, run.run, run.requested, step, request, job) : await liveStep(deps, externalId, run.requested, run.fallback, step, request, next);
  } catch (error) {
    if (error instanceof StepFailure) throw new StepFailure(`step ${step.stepNumber} "${step.stepName}": ${error.message}`);
    throw error;
  } finally {
    // On record before the step's outcome moves the run on or ends it.
    await started;
  }
  run.checkpoints.set(step.stepNumber, checkpoint);
  run.outputs.set(step.stepNumber, checkpoint.output);
  run.cost += checkpoint.cost;
  events.stepFinished(checkpoint, run.cost, performance.now() - stepStartedAt);
  (batchMode ? batchSteps : liveSteps).observe((performance.now() - stepStartedAt) / 1000);
  deps.logger.info("step completed", { externalId, step: step.stepNumber, model: checkpoint.model, fallback: checkpoint.usedFallback });
}

async function liveStep(deps: PipelineDeps, externalId: string, requested: CatalogModel, fallback: CatalogModel | undefined, step: SnapshotStep, request: ChatRequest, next: StepStart | undefined) {
  const reply = await callModel(deps, requested, fallback, request);
  return saveStepCheckpoint(deps.db, externalId, {
    stepNumber: step.stepNumber,
    stepName: step.stepName,
    model: reply.model,
    usedFallback: reply.usedFallback,
    batched: false,
    promptTokens: reply.promptTokens,
    completionTokens: reply.completionTokens,
    cost: reply.cost,
    output: reply.output,
    waitedMs: reply.waitedMs,
  }, next);
}

/** Submits or polls the provider batch; parks the job until the batch is done. */
async function batchedStep(deps: PipelineDeps, run: RunRow, requested: CatalogModel, step: SnapshotStep, request: ChatRequest, job: JobControl) {
  const progress = await advanceBatch(deps.db, deps, run, requested, request);
  if (progress.state === "waiting") {
    return job.resumeLater(Math.min(deps.batchPoll.firstMs * 2 ** progress.polls, deps.batchPoll.maxMs));
  }
  return saveStepCheckpoint(deps.db, run.externalId, {
    stepNumber: step.stepNumber,
    stepName: step.stepName,
    model: requested.id,
    usedFallback: false,
    batched: true,
    promptTokens: progress.promptTokens,
    completionTokens: progress.completionTokens,
    cost: progress.cost,
    output: progress.output,
    // A batch is waited on by polling, not by a paced call.
    waitedMs: 0,
  });
}
