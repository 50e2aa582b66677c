// One model call of a pipeline step through the official `openai` SDK: chat completions,
// structured outputs for json steps, the step's time budget, and the catalog's fallback model
// when the requested one fails upstream.
import OpenAI from "openai";
import type { ChatCompletionCreateParamsNonStreaming } from "openai/resources/chat/completions";
import type { CatalogModel } from "./model-catalog.ts";
import { ProviderNotConfigured, type ModelClients } from "./providers.ts";
import { costOfUsage, type Picodollars } from "./usd.ts";
import { modelCalls, recordModelUsage } from "../../../kit/src/metrics.ts";
import { inSpan } from "../../../kit/src/tracing.ts";

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
}

export interface ModelReply {
  output: string;
  model: string;
  usedFallback: boolean;
  promptTokens: number;
  completionTokens: number;
  cost: Picodollars;
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

/**
 * Failures another model might not have: server errors, rate limits, unknown model, unreachable
 * or unconfigured provider. A timeout is not one: the step's budget is spent.
 */
function fallbackHelps(error: unknown): boolean {
  if (error instanceof ProviderNotConfigured) return true;
  if (error instanceof OpenAI.APIUserAbortError || error instanceof OpenAI.APIConnectionTimeoutError) return false;
  if (error instanceof OpenAI.APIConnectionError) return true;
  if (error instanceof OpenAI.APIError) return error.status === undefined || error.status >= 500 || error.status === 429 || error.status === 404;
  return false;
}

function describe(modelId: string, error: unknown): string {
  if (error instanceof OpenAI.APIError && error.status !== undefined) return `${modelId} answered ${error.status}: ${error.message}`;
  return `${modelId}: ${(error as Error).message}`;
}

function completeWith(clients: ModelClients, model: CatalogModel, req: ChatRequest, signal: AbortSignal): Promise<Omit<ModelReply, "usedFallback">> {
  return inSpan("model call", { "gen_ai.request.model": model.id }, async (span) => {
    let completion: OpenAI.Chat.Completions.ChatCompletion;
    try {
      const { client, model: name } = clients.forModel(model.id);
      completion = await client.chat.completions.create(chatBody(name, req), { signal, maxRetries: 0 });
    } catch (error) {
      modelCalls.labels(model.id, "error").inc();
      throw error;
    }
    modelCalls.labels(model.id, "ok").inc();
    const usage = { promptTokens: completion.usage?.prompt_tokens ?? 0, completionTokens: completion.usage?.completion_tokens ?? 0 };
    const cost = costOfUsage(model, usage);
    // Billed even when the reply is then refused below.
    recordModelUsage(model.id, usage.promptTokens, usage.completionTokens, cost);
    span?.setAttributes({ "gen_ai.usage.input_tokens": usage.promptTokens, "gen_ai.usage.output_tokens": usage.completionTokens });
    const output = replyText(completion, req.outputFormat);
    return { output, model: model.id, ...usage, cost };
  });
}

/**
 * Runs the request on `primary`; on an upstream failure, once on `fallback` (one level: a
 * fallback's own fallback is not followed, so misconfigured chains cannot loop). Both share the
 * step's time budget.
 */
export async function callModel(clients: ModelClients, primary: CatalogModel, fallback: CatalogModel | undefined, req: ChatRequest): Promise<ModelReply> {
  req.signal?.throwIfAborted();
  // The budget's timer is cleared when the call ends: a signal from AbortSignal.timeout lives until
  // its time is up, and with it everything the SDK hung on it for the call (its abort listener,
  // controller and request), minutes after the reply, for every call the runner made.
  const budget = new AbortController();
  const timer = setTimeout(() => budget.abort(new DOMException("the step's time budget ran out", "TimeoutError")), req.timeoutMs);
  const signal = req.signal ? AbortSignal.any([budget.signal, req.signal]) : budget.signal;
  const timedOut = () => (req.signal?.aborted ? req.signal.reason : new StepFailure(`timed out after ${Math.round(req.timeoutMs / 1000)} s`));
  try {
    return { ...(await completeWith(clients, primary, req, signal)), usedFallback: false };
  } catch (error) {
    if (signal.aborted) throw timedOut();
    if (!fallback || !fallbackHelps(error)) throw new StepFailure(describe(primary.id, error));
    try {
      return { ...(await completeWith(clients, fallback, req, signal)), usedFallback: true };
    } catch (second) {
      if (signal.aborted) throw timedOut();
      throw new StepFailure(`${describe(primary.id, error)}; fallback ${describe(fallback.id, second)}`);
    }
  } finally {
    clearTimeout(timer);
  }
}
