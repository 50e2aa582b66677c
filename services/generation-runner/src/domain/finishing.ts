// The humanization pass, a finishing touch after the steps (the polishing state; the images are
// article-images.ts). Its result is checkpointed like a step, so it is generated and billed once.
import type { Db } from "../db/client.ts";
import { finishingCheckpointOf, saveFinishingCheckpoint, type FinishingCheckpoint } from "./checkpoints.ts";
import { callModel, type CallTurn, type ChatRequest, type ModelCalls } from "./model-call.ts";
import type { CatalogModel } from "./model-catalog.ts";
import { wordCountOf } from "./step-values.ts";
import { keptPhrases } from "./length-control.ts";
import { bodyOf, envelopeOf } from "../../../kit/src/article-envelope.ts";

const HUMANIZE_SYSTEM =
  "You are a seasoned human editor. You rewrite machine-sounding articles so they read as if a thoughtful person wrote them, without changing what they say. You return only the rewritten article.";

function humanizePrompt(body: string, words: number, a: { title: string; keyword?: string; language: string; keepPhrases?: string[] }): string {
  // The brief's phrases the article uses are kept where they are: the checks look for them there.
  const kept = keptPhrases(a, { heading: null, body });
  return `Title: ${a.title}
Primary keyword (may be blank): ${a.keyword ?? ""}

Rewrite the article below so it reads naturally, as a skilled human writer would have written it.

- Keep every fact, figure, name, quotation, heading and the markdown structure; add nothing new and drop nothing of substance.
- Keep the language (${a.language}) and about the same length (about ${words} words).
- Vary sentence length and rhythm: mix short, punchy sentences with longer ones.
- Replace stock phrases and filler ("in today's fast-paced world", "it's important to note", "delve into", "in conclusion") with plain, specific wording.
- Prefer concrete verbs and everyday words; keep the tone and point of view of the original.
- Return the article only: no preface, no notes, no code fence.
${kept}
Article:
${body}`;
}

/**
 * The humanization pass over the generated content. A JSON envelope keeps its shape: only the
 * body at article.content is rewritten.
 */
export async function humanize(
  db: Db,
  calls: ModelCalls,
  externalId: string,
  content: string,
  opts: {
    primary: CatalogModel;
    fallback?: CatalogModel;
    temperature: number;
    title: string;
    keyword?: string;
    /** The brief's phrases (target keyword, keywords): those the article uses are asked to stay. */
    keepPhrases?: string[];
    language: string;
    timeoutMs: number;
    signal?: AbortSignal;
    turn: CallTurn;
    onWait?: ChatRequest["onWait"];
    /** Said after the article when its citations must survive the rewrite (cited-writing.ts); absent, the prompt is as it always was. */
    citationNote?: string;
  },
): Promise<FinishingCheckpoint> {
  const done = await finishingCheckpointOf(db, externalId, "humanize");
  if (done) return done;
  const body = bodyOf(content);
  const reply = await callModel(calls, opts.primary, opts.fallback, {
    system: HUMANIZE_SYSTEM,
    user: opts.citationNote ? `${humanizePrompt(body, wordCountOf(body), opts)}\n\n${opts.citationNote}` : humanizePrompt(body, wordCountOf(body), opts),
    temperature: opts.temperature,
    outputFormat: "markdown",
    schemaName: "humanized",
    timeoutMs: opts.timeoutMs,
    signal: opts.signal,
    turn: opts.turn,
    onWait: opts.onWait,
  });
  const envelope = envelopeOf(content);
  const output = envelope ? JSON.stringify({ ...envelope.document, article: { ...envelope.article, content: reply.output } }) : reply.output;
  return saveFinishingCheckpoint(db, externalId, { task: "humanize", model: reply.model, promptTokens: reply.promptTokens, completionTokens: reply.completionTokens, cost: reply.cost, output, waitedMs: reply.waitedMs });
}
