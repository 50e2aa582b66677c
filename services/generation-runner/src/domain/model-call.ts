// One model call of a pipeline step through the official `openai` SDK: chat completions,
// structured outputs for json steps, the step's time budget, and the catalog's fallback model
// when the requested one fails upstream.
import OpenAI from "openai";
import type { ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions";
import type { CatalogModel } from "./model-catalog.ts";
import type { ModelClients } from "./providers.ts";
import { CallFailed, CallTimeout, type Pacer, type ProviderAnswer } from "./paced-call.ts";
import type { PacedTarget, WaitReason, Parking } from "../scheduler/index.ts";
import { costOfUsage } from "../../../kit/src/rules/usd.ts";
import { modelCalls, recordModelUsage } from "../../../kit/src/metrics.ts";
import { inSpan } from "../../../kit/src/tracing.ts";
import type { CallAccount } from "./call-account.ts";

export interface ChatRequest {
  system: string;
  user: string;
  temperature: number;
  /** text, markdown or json. */
  outputFormat: string;
  /** JSON text of the structured-output schema (json steps). */
  jsonSchema?: string;
  /** Name of the structured output (letters, digits, _ and - only). */
  schemaName: string;
  timeoutMs: number;
  /** Aborted when the article is cancelled: the call stops and its reason is thrown. */
  signal?: AbortSignal;
  /** Whose turn the call takes when the provider's budget is short (fair-gate.ts). */
  turn: CallTurn;
  /** Told when the call starts waiting for capacity, a rate limit or the provider. */
  onWait?: (reason: WaitReason, model: string) => void;
  /** Given: a long wait parks the article's job instead of holding it (a live step's call, before anything is billed). */
  parking?: Parking;
}

export interface CallTurn {
  /** The account the article belongs to. */
  account: string;
  /** The article's creation time (ms): an account's older articles go first. */
  since: number;
  /** The account's weight in the fair shares (its plan's share_weight). */
  weight: number;
}

/** What model calls need: the providers' clients and the pacing shared by every replica. */
export interface ModelCalls {
  clients: ModelClients;
  pacer: Pacer;
}

export interface ModelReply extends CallAccount {
  output: string;
}

/** A step that did not produce output; the job retries it with backoff. */
export class StepFailure extends Error {
  override readonly name = "StepFailure";
}

/** The request body as sent (also the body of a batch line). */
export function chatBody(model: string, req: ChatRequest): ChatCompletionCreateParamsNonStreaming {
  const messages: ChatCompletionCreateParamsNonStreaming["messages"] = [];
  // An empty system prompt is left out rather than sent as an empty message.
  if (req.system.trim() !== "") messages.push({ role: "system", content: req.system });
  messages.push({ role: "user", content: req.user });
  const body: ChatCompletionCreateParamsNonStreaming = { model, messages, temperature: req.temperature };
  if (req.outputFormat === "json") {
    body.response_format = req.jsonSchema
      ? { type: "json_schema", json_schema: { name: req.schemaName, schema: JSON.parse(req.jsonSchema) as Record<string, unknown>, strict: true } }
      : { type: "json_object" };
  }
  return body;
}

/** The reply's text, checked: json steps must answer with parseable JSON. */
export function replyText(completion: OpenAI.Chat.Completions.ChatCompletion, outputFormat: string): string {
  const choice = completion.choices[0];
  const content = choice?.message?.content ?? "";
  if (choice?.message?.refusal) throw new StepFailure(`the model refused: ${choice.message.refusal}`);
  if (content.trim() === "") throw new StepFailure(`the model returned no content (finish_reason ${choice?.finish_reason ?? "none"})`);
  if (outputFormat === "json") {
    try {
      JSON.parse(content);
    } catch {
      throw new StepFailure("the model's reply to a json step is not valid JSON");
    }
  }
  return content;
}

/** The smallest call that shows a model answers (a breaker's probe) and what its limits are: one token of reply. */
async function probeModel(clients: ModelClients, modelId: string, signal: AbortSignal): Promise<Headers> {
  const { client, model } = clients.forModel(modelId);
  const { response } = await client.chat.completions.create({ model, messages: [{ role: "user", content: "Reply with OK." }], max_tokens: 1 }, { signal, maxRetries: 0 }).withResponse();
  return response.headers;
}

/** The catalog model as the pacing knows it: its budget and the operator's limits for it. */
export function pacedTarget(model: CatalogModel): PacedTarget {
  return { id: model.id, limits: { requestsPerMinute: model.requestsPerMinute, tokensPerMinute: model.tokensPerMinute, maxConcurrentCalls: model.maxConcurrentCalls } };
}

// Completion tokens a model's replies ran to lately, per model: what a call reserves beside its
// prompt before the reply says what it used.
const expectedCompletion = new Map<string, number>();
const FIRST_COMPLETION_GUESS = 1024;

/** A call's tokens before it is made: its prompt (about four characters a token) and a typical reply. */
function estimatedTokens(model: string, req: ChatRequest): number {
  return Math.ceil((req.system.length + req.user.length) / 4) + (expectedCompletion.get(model) ?? FIRST_COMPLETION_GUESS);
}

function noteCompletion(model: string, tokens: number): void {
  const before = expectedCompletion.get(model);
  expectedCompletion.set(model, before === undefined ? tokens : Math.round(before * 0.8 + tokens * 0.2));
}

async function complete(clients: ModelClients, model: CatalogModel, req: ChatRequest, signal: AbortSignal): Promise<ProviderAnswer<OpenAI.Chat.Completions.ChatCompletion>> {
  return inSpan("model call", { "gen_ai.request.model": model.id }, async (span) => {
    try {
      const { client, model: name } = clients.forModel(model.id);
      const { data, response } = await client.chat.completions.create(chatBody(name, req), { signal, maxRetries: 0 }).withResponse();
      modelCalls.labels(model.id, "ok").inc();
      const used = (data.usage?.prompt_tokens ?? 0) + (data.usage?.completion_tokens ?? 0);
      span?.setAttributes({ "gen_ai.usage.input_tokens": data.usage?.prompt_tokens ?? 0, "gen_ai.usage.output_tokens": data.usage?.completion_tokens ?? 0 });
      return { value: data, headers: response.headers, tokens: used || undefined };
    } catch (error) {
      modelCalls.labels(model.id, "error").inc();
      throw error;
    }
  });
}

/**
 * Runs the request on `primary`, paced to its provider's budget (paced-call.ts): rate limits and
 * outages make it wait, not fail. On an outage it goes to `fallback` (one level: a fallback's own
 * fallback is not followed, so misconfigured chains cannot loop). The step's time budget bounds
 * each try of the call, not its waits.
 */
export async function callModel(calls: ModelCalls, primary: CatalogModel, fallback: CatalogModel | undefined, req: ChatRequest): Promise<ModelReply> {
  req.signal?.throwIfAborted();
  const models = fallback ? [primary, fallback] : [primary];
  let result;
  try {
    result = await calls.pacer.run(
      models.map(pacedTarget),
      { ...req.turn, tokens: estimatedTokens(primary.id, req), signal: req.signal, onWait: req.onWait, parking: req.parking },
      req.timeoutMs,
      {
        call: (target, signal) => complete(calls.clients, models.find((m) => m.id === target.id)!, req, signal),
        probe: (target, signal) => probeModel(calls.clients, target.id, signal),
        readLimits: (target, signal) => probeModel(calls.clients, target.id, signal),
      },
    );
  } catch (error) {
    if (error instanceof CallFailed) throw new StepFailure(error.last instanceof CallTimeout ? error.last.message : error.message);
    throw error;
  }
  const model = models.find((m) => m.id === result.target.id)!;
  const completion = result.value;
  const usage = { promptTokens: completion.usage?.prompt_tokens ?? 0, completionTokens: completion.usage?.completion_tokens ?? 0 };
  noteCompletion(model.id, usage.completionTokens);
  const cost = costOfUsage(model, usage);
  // Billed even when the reply is then refused below.
  recordModelUsage(model.id, usage.promptTokens, usage.completionTokens, cost);
  const output = replyText(completion, req.outputFormat);
  return { output, model: model.id, usedFallback: model !== primary, ...usage, cost, waitedMs: result.waitedMs };
}
