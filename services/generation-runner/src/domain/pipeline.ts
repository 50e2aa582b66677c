// One article's run: the pinned snapshot's steps in order, each rendered, called and
// checkpointed before the next; then polishing (images, the humanization pass), the originality
// check, completion with its score, quota settlement and the webhook hand-off. Every stage can be repeated
// after a crash: finished work is read back from checkpoints, and the article-store, quota and
// queue calls are idempotent.
import { Code, ConnectError } from "@connectrpc/connect";
import type { Article } from "../../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import type { SnapshotStep } from "../../../../proto/gen/articles/workflow_catalog/v1/snapshots_pb.ts";
import { renderTemplate, temperatureForTone, type StepFlags } from "../../../kit/src/rules/prompt-template.ts";
import { publishOptionsRecord } from "../../../kit/src/publish-options.ts";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Db } from "../db/client.ts";
import { articleResearch, researchText } from "../research/article-research.ts";
import { advanceBatch } from "./batch-mode.ts";
import { findRun, finishRun, imagesOf, openedNow, pickUpRun, researchOf, runCost, saveStepCheckpoint, stepCheckpointsOf, updateRun, type RunRow, type StepCheckpoint, type StepStart, type StoredImage } from "./checkpoints.ts";
import { articleImageOf, generateImages, placedImages } from "./article-images.ts";
import { humanize } from "./finishing.ts";
import { recordStepStart } from "./step-attempts.ts";
import { withImages } from "./image-placement.ts";
import { callModel, StepFailure, type CallTurn, type ChatRequest } from "./model-call.ts";
import type { Parking } from "./parking.ts";
import type { WaitReason } from "./pacing-ticket.ts";
import { stepDuration } from "../../../kit/src/metrics.ts";
import { findModelAndFallback, type CatalogModel } from "./model-catalog.ts";
import { ProgressReports } from "./progress-reports.ts";
import { citationStyleOf, citedText, humanizeCitationNote, promptWithCitations, sourcesText, writesArticleText } from "./cited-writing.ts";
import { descriptionOf, outlineOf, requirementsOf, templateValues, type RunContext } from "./step-values.ts";
import { checkVersionOriginality } from "./version-originality.ts";
import { bodyOf } from "../../../kit/src/article-envelope.ts";
import { formatUsd, sumUsd } from "../../../kit/src/rules/usd.ts";
import { isCancelledArticle } from "../../../kit/src/article-events.ts";
import { ArticleCancelled } from "./cancellation.ts";
import { RunEvents } from "./run-events.ts";
import type { FinishingCall } from "./length-control.ts";
import { qualityOf, reportOf } from "./quality-report.ts";
import { finishToBrief, type BriefFinishing } from "./brief-finishing.ts";
import { finishingCall, isBuiltinArticle, namedAfter } from "./finishing-calls.ts";
import { runSectionRevision, type RevisionOutcome } from "./section-revision.ts";
import type { JobControl, PipelineDeps } from "./pipeline-deps.ts";

export type { JobControl, PipelineDeps } from "./pipeline-deps.ts";

/** The article cannot run at all (no model, empty snapshot): retrying would not help. */
export class ArticleCannotRun extends Error {
  override readonly name = "ArticleCannotRun";
}

export type RunOutcome = "completed" | "skipped" | RevisionOutcome;

const DEFAULT_STEP_TIMEOUT_SECONDS = 300;
const liveSteps = stepDuration.labels("live");
const batchSteps = stepDuration.labels("batch");
const TERMINAL = new Set(["completed", "published"]);

const flagsOf = (s: SnapshotStep): StepFlags => ({
  include_additional_context: s.includeAdditionalContext,
  include_additional_instruction: s.includeAdditionalInstruction,
  include_requirements: s.includeRequirements,
  include_research: s.includeResearch,
  include_outline: s.includeOutline,
});

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

/** A protobuf timestamp in ms since the epoch (now when absent). */
export function timestampMs(at: { seconds: bigint; nanos: number } | undefined): number {
  return at ? Number(at.seconds) * 1000 + Math.floor(at.nanos / 1e6) : Date.now();
}

/** Runs the article; `known` is the article as just read, when the caller has it. */
export async function generateArticle(deps: PipelineDeps, externalId: string, job: JobControl, known?: Article): Promise<RunOutcome> {
  const reports = new ProgressReports((report) => deps.lifecycle.recordProgress({ externalId, ...report }), undefined, deps.progressKeepAliveMs);
  try {
    return await runArticle(deps, externalId, job, reports, new RunEvents(deps.eventLog, externalId, deps.logger), known);
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
  const { db, lifecycle } = deps;
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
  // its hand-offs (settlement, webhook), which the idempotent tail below then completes.
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
  // Every checkpoint is counted once: what earlier pickups stored, plus each one stored here.
  let cost = costSoFar;
  const temperature = temperatureForTone(article.tone);
  const outputs = new Map([...checkpoints].map(([n, cp]) => [n, cp.output]));
  // ai_model_used is the model that produced the first step, once it has.
  const modelUsed = () => checkpoints.get(steps[0]!.stepNumber)?.model;
  const progress = (status: "writing" | "batching" | "polishing", currentStep: string) => {
    events.state(status, currentStep, cost);
    reports.report({ status, currentStep, aiModelUsed: modelUsed(), cost: formatUsd(cost) });
  };
  const stopIfCancelled = () => job.signal?.throwIfAborted();
  const account = String(article.accountId);
  const turn: CallTurn = { account, since: timestampMs(article.createdAt), weight: (await deps.shareWeight?.(account)) ?? 1 };
  // A step held up by its provider says so in the article's events and the runner's log.
  const onWait = (step: string) => (reason: WaitReason, model: string) => {
    events.waiting(step, reason, model);
    deps.logger.info("step waiting for its provider", { externalId, step, reason, model });
  };
  // Batch mode takes single-step workflows only (spec 4.1); creation enforces it.
  const batchMode = settings.useBatchApi && steps.length === 1;
  const citations = citationStyleOf(settings.citations);
  // A parked job lets go once its progress is in: a later pickup reports for itself.
  const parking: Parking | undefined = job.parking && {
    ...job.parking,
    park: async (ms, outage) => {
      await Promise.all([reports.flush(), events.flush()]);
      return job.parking!.park(ms, outage);
    },
  };

  const pending = steps.filter((s) => !checkpoints.has(s.stepNumber));
  if (pending.length > 0) {
    const brandVoice = settings.brandVoiceId ? (await deps.articles.getBrandVoice({ brandVoiceId: settings.brandVoiceId })).brandVoice : undefined;
    // Gathered before the first step that includes it; read back otherwise, so {requirements}
    // keeps the searchers' questions on every pickup.
    const research = !settings.researchEnabled
      ? undefined
      : pending.some((s) => s.includeResearch)
        ? await articleResearch(db, lifecycle, deps.research, article).then((kept) => (kept.sources.forEach((source) => events.source(source)), kept))
        : await researchOf(db, externalId);
    const known = {
      article,
      settings,
      brandVoice: brandVoice ? { name: brandVoice.name, description: brandVoice.description } : null,
      research: researchText(research),
      sources: sourcesText(research),
      faqQuestions: research?.questions ?? [],
    };
    const ctx: RunContext = { ...known, requirements: requirementsOf(known) };

    for (const [i, step] of pending.entries()) {
      stopIfCancelled();
      progress(batchMode ? "batching" : "writing", step.stepName);
      // A batch parks the job between polls: the report must be in before the job lets go.
      if (batchMode) await reports.flush();
      const values = templateValues(ctx, steps, outputs);
      const flags = flagsOf(step);
      const user = renderTemplate(step.user, values, flags);
      const request: ChatRequest = {
        system: renderTemplate(step.system, values, flags),
        // Told to cite only when the article asked for citations: otherwise the prompt is as it always was.
        user: writesArticleText(step, steps) ? promptWithCitations(user, citations, research) : user,
        temperature,
        outputFormat: step.outputFormat,
        jsonSchema: step.jsonSchema,
        schemaName: `step_${step.stepNumber}`,
        timeoutMs: (step.timeoutSeconds || DEFAULT_STEP_TIMEOUT_SECONDS) * 1000,
        signal: job.signal,
        turn,
        onWait: onWait(step.stepName),
        parking: batchMode ? undefined : parking,
      };
      events.stepStarted(step, requested.id);
      const stepStartedAt = performance.now();
      // The run's opening recorded a new run's first step start, each checkpoint the next step's;
      // a resumed run's first step is counted while its call runs (a batch counts its submission,
      // not each poll of it; a pickup after parking goes on with its attempt). Only bookkeeping: a
      // failure to record it is logged, not the step's.
      const started = i > 0 || openedNow(run) || job.resumedFromPark || (batchMode && run.batchId)
        ? undefined
        : recordStepStart(db, externalId, step).catch((error) => deps.logger.warn("could not record a step start", { externalId, step: step.stepNumber, error: (error as Error).message }));
      let checkpoint: StepCheckpoint;
      try {
        checkpoint = batchMode ? await batchedStep(deps, run, requested, step, request, job) : await liveStep(deps, externalId, requested, fallback, step, request, pending[i + 1]);
      } catch (error) {
        if (error instanceof StepFailure) throw new StepFailure(`step ${step.stepNumber} "${step.stepName}": ${error.message}`);
        throw error;
      } finally {
        // On record before the step's outcome moves the run on or ends it.
        await started;
      }
      checkpoints.set(step.stepNumber, checkpoint);
      outputs.set(step.stepNumber, checkpoint.output);
      cost += checkpoint.cost;
      events.stepFinished(checkpoint, cost, performance.now() - stepStartedAt);
      (batchMode ? batchSteps : liveSteps).observe((performance.now() - stepStartedAt) / 1000);
      deps.logger.info("step completed", { externalId, step: step.stepNumber, model: checkpoint.model, fallback: checkpoint.usedFallback });
    }
  }

  // Polishing: the finishing touches.
  const last = steps[steps.length - 1]!;
  // The text as written, with its citations resolved (unchanged without citations); a humanize
  // pass rewrites the text as written, and its output is resolved in turn.
  // A built-in workflow's article, or a custom one's whose workflow opted in (brief_repairs at the
  // pinned revision), is brought within tolerance of its target first (length-control.ts), then repaired.
  const lengthControlled = isBuiltinArticle(last) || (snapshot.workflow?.briefRepairs === true && last.outputFormat === "markdown");
  if (lengthControlled) {
    stopIfCancelled();
    progress("polishing", "Adjusting length");
  }
  const finishingCallsAs = (stage: string) =>
    finishingCall(deps, externalId, { primary: requested, fallback, temperature, timeoutMs: (last.timeoutSeconds || DEFAULT_STEP_TIMEOUT_SECONDS) * 1000, signal: job.signal, turn, onWait: onWait(stage) });
  const sourcesRead = settings.researchEnabled ? await researchOf(db, externalId) : undefined;
  // Length control, then the brief checks the pipeline can fix get their repair calls within the
  // article's budget (brief-finishing.ts); other custom workflows get the checks and the report only.
  const briefFinishing = (budget: number, stage?: string): BriefFinishing => {
    const named = stage ? namedAfter(stage) : (call: FinishingCall) => call;
    return {
      length: {
        target: article.targetWordCount,
        title: article.title,
        language: article.language,
        tone: article.tone,
        outline: outlineOf(steps, outputs),
        keepPhrases: [article.targetKeyword ?? "", ...article.keywords],
      },
      repair: { title: article.title, language: article.language, tone: article.tone, targetKeyword: article.targetKeyword, keepPhrases: [article.targetKeyword ?? "", ...article.keywords] },
      report: (text, description) => reportOf(article, settings, citedText(text, citations, sourcesRead), description),
      describe: (text) => descriptionOf(steps, outputs, text),
      budget,
      lengthCall: named(finishingCallsAs("Adjusting length")),
      repairCall: named(finishingCallsAs("Repairing")),
    };
  };
  const repairBudget = deps.repairCalls ?? 0;
  const repairs = lengthControlled
    ? await finishToBrief(outputs.get(last.stepNumber)!, briefFinishing(repairBudget))
    : { text: outputs.get(last.stepNumber)!, description: null, repairs: [], calls: 0 };
  const written = repairs.text;
  const cited = citedText(written, citations, sourcesRead);
  const content = cited.content;
  let images: StoredImage[] = [];
  if (settings.imageCount > 0 && article.currentVersionId !== undefined) {
    // Completed by an earlier pickup (its hand-offs remain): the images are those it completed with.
    images = await imagesOf(db, externalId);
  } else if (settings.imageCount > 0) {
    stopIfCancelled();
    progress("polishing", "Generating images");
    const preset = settings.imagePresetId ? (await deps.articles.getImagePreset({ imagePresetId: settings.imagePresetId })).imagePreset : undefined;
    // Images are finishing touches: on the last attempt the article completes without those still failing.
    images = await generateImages(
      { db, clients: deps.clients, pacer: deps.pacer, turn, stores: deps.imageStores, logger: deps.logger, imageModel: deps.imageModel, publicBaseUrl: deps.publicBaseUrl },
      externalId,
      bodyOf(content),
      { count: settings.imageCount, aspectRatio: settings.imageAspectRatio, title: article.title, keyword: article.targetKeyword, style: preset?.style },
      job.finalAttempt,
    );
    for (const image of images) events.image(image, articleImageOf(deps.publicBaseUrl, image).url);
  }
  // Every version shows the images at the same places; the text around them is what the models wrote.
  const illustrated = (text: string) => withImages(text, settings.imageCount, placedImages(deps.publicBaseUrl, images));
  // Completion keeps the article polishing for the pass, which pollers see named.
  if (article.humanize) progress("polishing", "Humanizing");
  // Before completion, and none waiting for another: the reports are in (without a pass,
  // completion itself records the final state, so an unsent report would only repeat it), the
  // run's events land before the one its completion logs, and the cost is the ledger's total, not
  // the running sum (the cost breakdown lists the same checkpoints). Without a pass the ledger
  // holds the steps' checkpoints alone, and `checkpoints` holds each as stored (ours, an earlier
  // pickup's or a racing worker's); a pass's checkpoint may be there from an earlier pickup, and
  // length control's calls are finishing checkpoints too.
  const [totalCost] = await Promise.all([
    article.humanize || lengthControlled ? runCost(db, externalId) : sumUsd([...checkpoints.values()].map((cp) => cp.cost)),
    article.humanize ? reports.flush() : reports.supersede(),
    events.flush(),
  ]);
  stopIfCancelled();
  const contentWords = cited.words;
  // The text of the final version without its images is scored before it is stored, so the score
  // goes with it (completion, or the pass's version) and the article completes with its score.
  const firstScore = article.humanize ? undefined : await deps.detector.score(bodyOf(content));
  // Each version is measured against the brief as it is stored (quality-report.ts).
  const description = repairs.description ?? descriptionOf(steps, outputs, content);
  const { article: generated } = await lifecycle.completeGeneration({
    externalId,
    content: illustrated(content),
    images: images.map((i) => articleImageOf(deps.publicBaseUrl, i)),
    description: description ?? undefined,
    actualWordCount: contentWords,
    aiModelUsed: modelUsed()!,
    cost: formatUsd(totalCost),
    moreVersionsFollow: article.humanize,
    aiDetectionScore: firstScore,
    sources: cited.sources,
    citationsRemoved: cited.removed,
    quality: qualityOf(article, settings, cited, description, repairs.repairs),
  });
  // The text of the current version without its images (what is scored) and its words (what is settled).
  let finalContent = content;
  let finalWords = contentWords;
  let versionId = generated?.currentVersionId;
  let completed = generated;
  if (article.humanize) {
    // The pass rewrites the text alone; the images are placed in its output as in the first version.
    const pass = await humanize(db, deps, externalId, written, {
      primary: requested,
      fallback,
      temperature,
      title: article.title,
      keyword: article.targetKeyword,
      keepPhrases: [article.targetKeyword ?? "", ...article.keywords],
      language: article.language,
      timeoutMs: (last.timeoutSeconds || DEFAULT_STEP_TIMEOUT_SECONDS) * 1000,
      signal: job.signal,
      turn,
      onWait: onWait("Humanizing"),
      citationNote: humanizeCitationNote(citations, sourcesRead),
    });
    await events.flush();
    // The pass rewrites the whole text, and a model rewriting 3,000 words returns fewer: its output
    // gets length control and the checks again, with the repair calls the first round left
    // (a keyword it dropped from the introduction), its tasks named "after humanize: …".
    const keptDescription = generated?.description ?? description;
    const again = lengthControlled
      ? await finishToBrief(pass.output, { ...briefFinishing(Math.max(0, repairBudget - repairs.calls), "after humanize"), describe: () => keptDescription, keepDescription: true })
      : { text: pass.output, repairs: [] };
    const humanized = citedText(again.text, citations, sourcesRead);
    const added = await lifecycle.addVersion({
      externalId,
      content: illustrated(humanized.content),
      kind: "humanized",
      actualWordCount: humanized.words,
      complete: true,
      cost: formatUsd(await runCost(db, externalId)),
      aiDetectionScore: await deps.detector.score(bodyOf(humanized.content)),
      // Without citations the sources stay as version 1 recorded them (none cited).
      sources: citations === "none" ? undefined : { sources: humanized.sources, citationsRemoved: humanized.removed },
      // The description stays the first version's (the pass rewrites the body alone).
      quality: qualityOf(article, settings, humanized, keptDescription, [...repairs.repairs, ...again.repairs]),
    });
    await updateRun(db, externalId, { humanizedVersionId: Number(added.versionId) });
    finalContent = humanized.content;
    finalWords = humanized.words;
    versionId = added.versionId;
    completed = added.article;
  }
  if (versionId === undefined) throw new Error("article-store returned no current version after completion");

  // A version stored by an earlier pickup without its score (before scores went with versions) is
  // scored now; the word settlement goes to another service and need not wait for it.
  const unscored = completed?.aiDetectionScore === undefined && completed?.currentVersionId === versionId;
  await Promise.all([
    unscored ? deps.detector.score(bodyOf(finalContent)).then((score) => lifecycle.recordOriginality({ externalId, versionId, aiDetectionScore: score })) : undefined,
    deps.quota.settleWords({ reference: externalId, actualWords: BigInt(finalWords), costUsd: completed?.cost || undefined }),
  ]);
  // The webhook goes out after the score is recorded, so its payload carries it.
  const webhookEnqueued = Boolean(article.webhookUrl) && !run.webhookEnqueuedAt;
  if (webhookEnqueued) await deps.enqueueWebhook({ externalId, versionId: Number(versionId) });
  const publish = article.settings?.publish;
  if (publish) {
    // Asked for at creation: the request's time makes its job id, so a repeated hand-off queues nothing new.
    const requestedAt = article.createdAt ? timestampDate(article.createdAt).toISOString() : new Date(0).toISOString();
    await deps.enqueuePublication({ externalId, projectId: Number(article.projectId), destinationId: Number(publish.destinationId), options: publishOptionsRecord(publish.options), requestedAt });
  }
  // The job id makes a repeated enqueue harmless, so one write records both.
  await finishRun(db, externalId, webhookEnqueued);
  deps.logger.info("article completed", { externalId, steps: steps.length, humanized: article.humanize });
  return "completed";
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
