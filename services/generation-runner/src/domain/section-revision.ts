// A section revision's run (POST /v1/articles/{id}/revisions): one model call that rewrites one
// H2 section of a finished article, made as a finishing call of the article (paced and fairly
// shared like any, checkpointed as "revision N: …" so a retried job replays the reply instead of
// paying again, and listed in the article's cost breakdown). It reuses the article's stored
// research, never searching again. article-store splices the text into the current content; the
// words written are settled against the revision's own reservation; a client's cancel aborts the
// call and gives the reservation back. The article's status and current_step are never touched,
// and nothing is sent to its webhook_url.
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { Article } from "../../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import type { ArticleRevisionService, SectionRevision } from "../../../../proto/gen/articles/article_store/v1/revisions_pb.ts";
import { bodyOf } from "../../../kit/src/article-envelope.ts";
import { articleSections, revisedSectionText, sectionText, sectionWords } from "../../../kit/src/rules/article-sections.ts";
import { countWords } from "../../../kit/src/words.ts";
import { temperatureForTone } from "../../../kit/src/rules/prompt-template.ts";
import { researchOf, runCost } from "./checkpoints.ts";
import { formatUsd } from "../../../kit/src/rules/usd.ts";
import { citationStyleOf, promptWithCitations } from "./cited-writing.ts";
import { finishingCall } from "./finishing-calls.ts";
import { findModelAndFallback } from "./model-catalog.ts";
import { ProviderOutage } from "./paced-call.ts";
import { ArticleCancelled } from "./cancellation.ts";
import type { JobControl, PipelineDeps } from "./pipeline-deps.ts";

// A section's call is short: a few hundred words.
const REVISION_TIMEOUT_MS = 120_000;
// The article around the section, as context: enough to keep its voice, bounded for long articles.
const CONTEXT_CHARS = 12_000;

const ACTIONS: Record<string, (words: number, r: SectionRevision) => string> = {
  rewrite: (words, r) => `Rewrite the section following this instruction: ${r.instruction ?? ""}\nKeep it about ${words} words.`,
  expand: (words) => `Expand the section to about ${words} words: more detail, examples and steps that belong under its heading, nothing invented.`,
  shorten: (words) => `Shorten the section to about ${words} words, keeping its key points.`,
  regenerate: (words) => `Write the section afresh, about ${words} words, covering what its heading promises.`,
  translate: (words, r) => `Translate the section, heading included, into the language "${r.language ?? ""}" (about ${words} words). Return the translated heading as the first line, starting with "## ".`,
  humanize: (words) => `Rewrite the section so it reads as a person wrote it: varied sentence length, plain words, no stock phrases; about ${words} words, same facts.`,
};

/** The revision has ended (completed, or failed for good); anything else thrown is an attempt to retry. */
export type RevisionOutcome = "revised" | "revision failed";

/** Runs the article's pending revision; errors a later attempt could get past are thrown, the others end it as failed. */
export async function runSectionRevision(deps: PipelineDeps & { revisions: Client<typeof ArticleRevisionService> }, article: Article, revision: SectionRevision, job: JobControl): Promise<RevisionOutcome> {
  const { externalId } = article;
  try {
    const body = bodyOf(article.content ?? "");
    const section = articleSections(body)[revision.sectionIndex - 1];
    if (!section || section.heading !== revision.sectionHeading) throw new RevisionImpossible(`the section "${revision.sectionHeading}" is no longer section ${revision.sectionIndex} of the article`);
    const words = revision.targetWords ?? Math.max(sectionWords(body, section), 50);
    const { model, fallback } = await findModelAndFallback(deps.db, article.settings!.model);
    if (!model) throw new RevisionImpossible(`model "${article.settings!.model}" is not in the catalog`);
    const research = article.settings!.researchEnabled ? await researchOf(deps.db, externalId) : undefined;
    const call = finishingCall(deps, externalId, {
      primary: model,
      fallback,
      temperature: temperatureForTone(article.tone),
      timeoutMs: REVISION_TIMEOUT_MS,
      signal: job.signal,
      turn: { account: String(article.accountId), since: Date.now(), weight: (await deps.shareWeight?.(String(article.accountId))) ?? 1 },
    });
    const ask = ACTIONS[revision.action];
    if (!ask) throw new RevisionImpossible(`unknown action "${revision.action}"`);
    const user = `Article title: ${article.title}
Language: ${article.language}; tone: ${article.tone}.
${ask(words, revision)}${revision.instruction && revision.action !== "rewrite" ? `\nAlso: ${revision.instruction}` : ""}
Return only the section's paragraphs in markdown${revision.action === "translate" ? " after its heading" : ", without its heading"}; keep its citation markers such as [2].

The section to work on:
## ${section.heading}

${sectionText(body, section).trim()}

The whole article, for context only (do not return it):
${body.slice(0, CONTEXT_CHARS)}`;
    const reply = await call(`revision ${revision.number}: ${revision.action} "${section.heading}"`, {
      system: "You are the writer of the article and revise one of its sections. You keep its facts and voice, invent no statistics, quotations or sources, and return only the section's markdown.",
      user: promptWithCitations(user, citationStyleOf(article.settings!.citations), research),
    });
    const revised = revisedSectionText(reply);
    if (revised.text === "") throw new Error("the model returned an empty section");
    const written = countWords(revised.text);
    const completed = await deps.revisions.completeRevision({
      externalId,
      number: revision.number,
      sectionText: revised.text,
      sectionHeading: revision.action === "translate" ? revised.heading : undefined,
      writtenWords: written,
      cost: formatUsd(await runCost(deps.db, externalId)),
    });
    // Once the version is made the revision is no longer pending, so a later pickup would not settle: tried here until it holds.
    await settleRevision(deps, revision.reference, written);
    // The new version is scored and measured as an edit's is; a failure leaves it unchecked, the revision made.
    if (deps.checkVersion && completed.version) {
      await deps.checkVersion(externalId, completed.version.number).catch((error) => deps.logger.warn("could not check a revised version's originality", { externalId, error: (error as Error).message }));
    }
    deps.logger.info("section revised", { externalId, revision: revision.number, action: revision.action, words: written });
    return "revised";
  } catch (error) {
    const failedForGood =
      error instanceof RevisionImpossible ||
      // A client's cancel: article-store has failed the revision already, and the call stopped.
      error instanceof ArticleCancelled ||
      job.signal?.aborted === true ||
      error instanceof ProviderOutage ||
      (error instanceof ConnectError && (error.code === Code.FailedPrecondition || error.code === Code.NotFound)) ||
      (job.finalAttempt && !(error instanceof Error && error.name === "DelayedError"));
    if (!failedForGood) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    await deps.revisions.failRevision({ externalId, number: revision.number, reason }).catch(() => {});
    await deps.quota.releaseWords({ reference: revision.reference }).catch(() => {});
    deps.logger.warn("section revision failed", { externalId, revision: revision.number, reason });
    return "revision failed";
  }
}

const SETTLE_TRIES = 5;

async function settleRevision(deps: PipelineDeps, reference: string, words: number): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await deps.quota.settleWords({ reference, actualWords: BigInt(words) });
      return;
    } catch (error) {
      if (attempt >= SETTLE_TRIES) throw error;
      await Bun.sleep(500 * attempt);
    }
  }
}

/** Nothing a retry could change: the section or the model is gone. */
class RevisionImpossible extends Error {
  override readonly name = "RevisionImpossible";
}
