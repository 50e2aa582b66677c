// The end of a run, after its steps: polishing (length control and the brief's repairs, images),
// completion with the version's score and quality report (and the humanization pass's version),
// then the hand-offs (word settlement, webhook, publication) and the run marked finished. Every
// stage can be repeated after a crash: article-store's, the quota's and the queues' calls are
// idempotent, and an earlier pickup's images and pass are read back.
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { Article } from "../../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { bodyOf } from "../../../kit/src/article-envelope.ts";
import { publishOptionsRecord } from "../../../kit/src/publish-options.ts";
import { formatUsd, sumUsd } from "../../../kit/src/rules/usd.ts";
import type { ArticleRun } from "./article-run.ts";
import { articleImageOf, generateImages, placedImages } from "./article-images.ts";
import { finishToBrief, type BriefFinishing } from "./brief-finishing.ts";
import { finishRun, imagesOf, researchOf, runCost, updateRun, type StoredImage } from "./checkpoints.ts";
import { citedText, humanizeCitationNote } from "./cited-writing.ts";
import { finishingCall, isBuiltinArticle, namedAfter } from "./finishing-calls.ts";
import { humanize } from "./finishing.ts";
import { withImages } from "./image-placement.ts";
import type { FinishingCall } from "./length-control.ts";
import type { PipelineDeps } from "./pipeline-deps.ts";
import { qualityOf, reportOf } from "./quality-report.ts";
import { descriptionOf, outlineOf } from "./step-values.ts";

/** The polished text of the first version, before it is stored. */
interface Polished {
  /** The text as written and repaired (what a humanize pass rewrites). */
  written: string;
  /** `written` with its citations resolved: what is stored, scored and counted. */
  cited: ReturnType<typeof citedText>;
  description: string | null;
  repairs: Awaited<ReturnType<typeof finishToBrief>>["repairs"];
  /** The repair calls spent, which the humanize pass's round may not spend again. */
  repairCalls: number;
  images: StoredImage[];
  lengthControlled: boolean;
  sourcesRead: Awaited<ReturnType<typeof researchOf>>;
}

/** The article's current version once completed (after the pass, when asked for). */
interface Completed {
  versionId: bigint;
  /** Its text without its images (what is scored) and its words (what is settled). */
  content: string;
  words: number;
  article?: Article;
}

/** Polishes, completes and hands off the run whose steps are all written. */
export async function completeRun(deps: PipelineDeps, run: ArticleRun): Promise<void> {
  const polished = await polish(deps, run);
  const completed = await complete(deps, run, polished);
  await handOff(deps, run, completed);
}

// Length control, then the brief checks the pipeline can fix get their repair calls within the
// article's budget (brief-finishing.ts); other custom workflows get the checks and the report only.
function briefFinishing(deps: PipelineDeps, run: ArticleRun, sourcesRead: Polished["sourcesRead"], budget: number, stage?: string): BriefFinishing {
  const { article, settings, steps, outputs } = run;
  const named = stage ? namedAfter(stage) : (call: FinishingCall) => call;
  const calls = (name: string) =>
    finishingCall(deps, run.externalId, { primary: run.requested, fallback: run.fallback, temperature: run.temperature, timeoutMs: run.finishingTimeoutMs, signal: run.job.signal, turn: run.turn, onWait: run.onWait(name) });
  const keepPhrases = [article.targetKeyword ?? "", ...article.keywords];
  return {
    length: { target: article.targetWordCount, title: article.title, language: article.language, tone: article.tone, outline: outlineOf(steps, outputs), keepPhrases },
    repair: { title: article.title, language: article.language, tone: article.tone, targetKeyword: article.targetKeyword, keepPhrases },
    report: (text, description) => reportOf(article, settings, citedText(text, run.citations, sourcesRead), description),
    describe: (text) => descriptionOf(steps, outputs, text),
    budget,
    lengthCall: named(calls("Adjusting length")),
    repairCall: named(calls("Repairing")),
  };
}

async function polish(deps: PipelineDeps, run: ArticleRun): Promise<Polished> {
  const { settings, steps, snapshot, outputs, externalId } = run;
  const last = steps[steps.length - 1]!;
  // A built-in workflow's article, or a custom one's whose workflow opted in (brief_repairs at the
  // pinned revision), is brought within tolerance of its target first (length-control.ts), then repaired.
  const lengthControlled = isBuiltinArticle(last) || (snapshot.workflow?.briefRepairs === true && last.outputFormat === "markdown");
  if (lengthControlled) {
    run.stopIfCancelled();
    run.progress("polishing", "Adjusting length");
  }
  const sourcesRead = settings.researchEnabled ? await researchOf(deps.db, externalId) : undefined;
  const finished = lengthControlled
    ? await finishToBrief(outputs.get(last.stepNumber)!, briefFinishing(deps, run, sourcesRead, deps.repairCalls ?? 0))
    : { text: outputs.get(last.stepNumber)!, description: null, repairs: [], calls: 0 };
  // The text as written, with its citations resolved (unchanged without citations).
  const cited = citedText(finished.text, run.citations, sourcesRead);
  return {
    written: finished.text,
    cited,
    description: finished.description ?? descriptionOf(steps, outputs, cited.content),
    repairs: finished.repairs,
    repairCalls: finished.calls,
    images: await imagesFor(deps, run, cited.content),
    lengthControlled,
    sourcesRead,
  };
}

async function imagesFor(deps: PipelineDeps, run: ArticleRun, content: string): Promise<StoredImage[]> {
  const { article, settings, externalId } = run;
  if (settings.imageCount === 0) return [];
  // Completed by an earlier pickup (its hand-offs remain): the images are those it completed with.
  if (article.currentVersionId !== undefined) return imagesOf(deps.db, externalId);
  run.stopIfCancelled();
  run.progress("polishing", "Generating images");
  const preset = settings.imagePresetId ? (await deps.articles.getImagePreset({ imagePresetId: settings.imagePresetId })).imagePreset : undefined;
  // Images are finishing touches: on the last attempt the article completes without those still failing.
  const images = await generateImages(
    { db: deps.db, clients: deps.clients, pacer: deps.pacer, turn: run.turn, stores: deps.imageStores, logger: deps.logger, imageModel: deps.imageModel, publicBaseUrl: deps.publicBaseUrl },
    externalId,
    bodyOf(content),
    { count: settings.imageCount, aspectRatio: settings.imageAspectRatio, title: article.title, keyword: article.targetKeyword, style: preset?.style },
    run.job.finalAttempt,
  );
  for (const image of images) run.events.image(image, articleImageOf(deps.publicBaseUrl, image).url);
  return images;
}

async function complete(deps: PipelineDeps, run: ArticleRun, polished: Polished): Promise<Completed> {
  const { article, settings, externalId, reports, events } = run;
  const { cited, images, lengthControlled } = polished;
  // Every version shows the images at the same places; the text around them is what the models wrote.
  const illustrated = (text: string) => withImages(text, settings.imageCount, placedImages(deps.publicBaseUrl, images));
  // Completion keeps the article polishing for the pass, which pollers see named.
  if (article.humanize) run.progress("polishing", "Humanizing");
  // Before completion, and none waiting for another: the reports are in (without a pass,
  // completion itself records the final state, so an unsent report would only repeat it), the
  // run's events land before the one its completion logs, and the cost is the ledger's total, not
  // the running sum (the cost breakdown lists the same checkpoints). Without a pass the ledger
  // holds the steps' checkpoints alone, and `checkpoints` holds each as stored (ours, an earlier
  // pickup's or a racing worker's); a pass's checkpoint may be there from an earlier pickup, and
  // length control's calls are finishing checkpoints too.
  const [totalCost] = await Promise.all([
    article.humanize || lengthControlled ? runCost(deps.db, externalId) : sumUsd([...run.checkpoints.values()].map((cp) => cp.cost)),
    article.humanize ? reports.flush() : reports.supersede(),
    events.landed(),
  ]);
  run.stopIfCancelled();
  // The text of the final version without its images is scored before it is stored, so the score
  // goes with it (completion, or the pass's version) and the article completes with its score.
  const firstScore = article.humanize ? undefined : await deps.detector.score(bodyOf(cited.content));
  // Each version is measured against the brief as it is stored (quality-report.ts).
  const { article: generated } = await deps.lifecycle.completeGeneration({
    externalId,
    content: illustrated(cited.content),
    images: images.map((i) => articleImageOf(deps.publicBaseUrl, i)),
    description: polished.description ?? undefined,
    actualWordCount: cited.words,
    aiModelUsed: run.modelUsed()!,
    cost: formatUsd(totalCost),
    moreVersionsFollow: article.humanize,
    aiDetectionScore: firstScore,
    sources: cited.sources,
    citationsRemoved: cited.removed,
    quality: qualityOf(article, settings, cited, polished.description, polished.repairs),
  });
  if (article.humanize) return humanized(deps, run, polished, generated, illustrated);
  if (generated?.currentVersionId === undefined) throw new Error("article-store returned no current version after completion");
  return { versionId: generated.currentVersionId, content: cited.content, words: cited.words, article: generated };
}

/** The humanization pass's version: the text rewritten, brought to the brief again and stored as the current version. */
async function humanized(deps: PipelineDeps, run: ArticleRun, polished: Polished, generated: Article | undefined, illustrated: (text: string) => string): Promise<Completed> {
  const { article, settings, externalId, citations } = run;
  const { sourcesRead, lengthControlled } = polished;
  // The pass rewrites the text alone; the images are placed in its output as in the first version.
  const pass = await humanize(deps.db, deps, externalId, polished.written, {
    primary: run.requested,
    fallback: run.fallback,
    temperature: run.temperature,
    title: article.title,
    keyword: article.targetKeyword,
    keepPhrases: [article.targetKeyword ?? "", ...article.keywords],
    language: article.language,
    timeoutMs: run.finishingTimeoutMs,
    signal: run.job.signal,
    turn: run.turn,
    onWait: run.onWait("Humanizing"),
    citationNote: humanizeCitationNote(citations, sourcesRead),
  });
  await run.events.landed();
  // The pass rewrites the whole text, and a model rewriting 3,000 words returns fewer: its output
  // gets length control and the checks again, with the repair calls the first round left
  // (a keyword it dropped from the introduction), its tasks named "after humanize: …".
  const keptDescription = generated?.description ?? polished.description;
  const budgetLeft = Math.max(0, (deps.repairCalls ?? 0) - polished.repairCalls);
  const again = lengthControlled
    ? await finishToBrief(pass.output, { ...briefFinishing(deps, run, sourcesRead, budgetLeft, "after humanize"), describe: () => keptDescription, keepDescription: true })
    : { text: pass.output, repairs: [] };
  const rewritten = citedText(again.text, citations, sourcesRead);
  const added = await deps.lifecycle.addVersion({
    externalId,
    content: illustrated(rewritten.content),
    kind: "humanized",
    actualWordCount: rewritten.words,
    complete: true,
    cost: formatUsd(await runCost(deps.db, externalId)),
    aiDetectionScore: await deps.detector.score(bodyOf(rewritten.content)),
    // Without citations the sources stay as version 1 recorded them (none cited).
    sources: citations === "none" ? undefined : { sources: rewritten.sources, citationsRemoved: rewritten.removed },
    // The description stays the first version's (the pass rewrites the body alone).
    quality: qualityOf(article, settings, rewritten, keptDescription, [...polished.repairs, ...again.repairs]),
  });
  await updateRun(deps.db, externalId, { humanizedVersionId: Number(added.versionId) });
  return { versionId: added.versionId, content: rewritten.content, words: rewritten.words, article: added.article };
}

async function handOff(deps: PipelineDeps, run: ArticleRun, completed: Completed): Promise<void> {
  const { article, externalId } = run;
  const { versionId } = completed;
  // A version stored by an earlier pickup without its score (before scores went with versions) is
  // scored now; the word settlement goes to another service and need not wait for it.
  const unscored = completed.article?.aiDetectionScore === undefined && completed.article?.currentVersionId === versionId;
  await Promise.all([
    unscored ? deps.detector.score(bodyOf(completed.content)).then((score) => deps.lifecycle.recordOriginality({ externalId, versionId, aiDetectionScore: score })) : undefined,
    deps.quota.settleWords({ reference: externalId, actualWords: BigInt(completed.words), costUsd: completed.article?.cost || undefined }),
  ]);
  // The webhook goes out after the score is recorded, so its payload carries it.
  const webhookEnqueued = Boolean(article.webhookUrl) && !run.run.webhookEnqueuedAt;
  if (webhookEnqueued) await deps.enqueueWebhook({ externalId, versionId: Number(versionId) });
  const publish = article.settings?.publish;
  if (publish) {
    // Asked for at creation: the request's time makes its job id, so a repeated hand-off queues nothing new.
    const requestedAt = article.createdAt ? timestampDate(article.createdAt).toISOString() : new Date(0).toISOString();
    await deps.enqueuePublication({ externalId, projectId: Number(article.projectId), destinationId: Number(publish.destinationId), options: publishOptionsRecord(publish.options), requestedAt });
  }
  // The job id makes a repeated enqueue harmless, so one write records both.
  await finishRun(deps.db, externalId, webhookEnqueued);
}
