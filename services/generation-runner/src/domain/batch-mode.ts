// Batch mode (use_batch_api): the article's single step goes to the provider's batch API
// (files + batches through the SDK), at half the model's prices, and the run polls until the
// batch is done. The batch id is checkpointed, so a retried job polls the same batch instead of
// submitting (and paying for) another; a batch whose id a crash lost is found by its metadata.
import { recordModelUsage } from "../../../kit/src/metrics.ts";
import { toFile } from "openai";
import type OpenAI from "openai";
import type { Db } from "../db/client.ts";
import { updateRun, type RunRow } from "./checkpoints.ts";
import { chatBody, replyText, StepFailure, type ChatRequest, type ModelCalls } from "./model-call.ts";
import { CallFailed } from "./paced-call.ts";
import { NO_LIMITS } from "../scheduler/index.ts";
import type { CatalogModel } from "./model-catalog.ts";
import { costOfUsage, type Picodollars } from "../../../kit/src/rules/usd.ts";

/** Providers bill batch work at about half price (spec 3). */
export const BATCH_SHARE = { numerator: 1n, denominator: 2n };

const FINAL_FAILURES = new Set(["failed", "expired", "cancelled", "cancelling"]);

export type BatchProgress =
  | { state: "waiting"; polls: number }
  | { state: "done"; output: string; promptTokens: number; completionTokens: number; cost: Picodollars };

async function submit(client: OpenAI, externalId: string, body: unknown): Promise<string> {
  const line = JSON.stringify({ custom_id: externalId, method: "POST", url: "/v1/chat/completions", body });
  const file = await client.files.create({ file: await toFile(Buffer.from(line + "\n"), `${externalId}.jsonl`), purpose: "batch" });
  const batch = await client.batches.create({
    input_file_id: file.id,
    endpoint: "/v1/chat/completions",
    completion_window: "24h",
    metadata: { external_id: externalId },
  });
  return batch.id;
}

/** A submission paced to the provider's batch budget (`<model>:batches`): its 429s wait, not fail. */
async function pacedSubmit(calls: ModelCalls, client: OpenAI, model: CatalogModel, externalId: string, body: unknown, req: ChatRequest): Promise<string> {
  try {
    const { value } = await calls.pacer.run([{ id: `${model.id}:batches`, limits: NO_LIMITS }], { ...req.turn, tokens: 0, signal: req.signal }, req.timeoutMs, {
      call: async () => ({ value: await submit(client, externalId, body) }),
      probe: (_, signal) => client.batches.list({ limit: 1 }, { signal, maxRetries: 0 }),
    });
    return value;
  } catch (error) {
    if (error instanceof CallFailed) throw new StepFailure(`batch submission: ${error.message}`);
    throw error;
  }
}

const STILL_RUNNING = new Set(["validating", "in_progress", "finalizing"]);

/** A batch of this article still running at the provider, found by the metadata it was submitted with. */
export async function findRunningBatch(client: OpenAI, externalId: string): Promise<string | undefined> {
  const recent = await client.batches.list({ limit: 100 });
  return recent.data.find((b) => b.metadata?.external_id === externalId && STILL_RUNNING.has(b.status))?.id;
}

/** Submits the step when no batch is pending, else polls it once. */
export async function advanceBatch(db: Db, calls: ModelCalls, run: RunRow, model: CatalogModel, req: ChatRequest): Promise<BatchProgress> {
  const { client, model: name } = calls.clients.forModel(model.id);
  if (!run.batchId) {
    // A crash between submitting and recording the id leaves the batch running: a later pickup
    // finds it by its metadata instead of paying for a second one.
    const submitted = run.pickups > 1 ? await findRunningBatch(client, run.externalId) : undefined;
    const batchId = submitted ?? (await pacedSubmit(calls, client, model, run.externalId, chatBody(name, req), req));
    await updateRun(db, run.externalId, { batchId, batchPolls: 0 });
    return { state: "waiting", polls: 0 };
  }
  const batch = await client.batches.retrieve(run.batchId);
  if (FINAL_FAILURES.has(batch.status)) {
    // Cleared so the job's retry submits a fresh batch.
    await updateRun(db, run.externalId, { batchId: null });
    const reason = batch.errors?.data?.map((e) => e.message).join("; ") || batch.status;
    throw new StepFailure(`batch ${batch.id} ended ${batch.status}: ${reason}`);
  }
  if (batch.status !== "completed") {
    await updateRun(db, run.externalId, { batchPolls: run.batchPolls + 1 });
    return { state: "waiting", polls: run.batchPolls + 1 };
  }
  const fileId = batch.output_file_id ?? batch.error_file_id;
  if (!fileId) {
    await updateRun(db, run.externalId, { batchId: null });
    throw new StepFailure(`batch ${batch.id} completed without an output file`);
  }
  const text = await (await client.files.content(fileId)).text();
  const line = text
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { custom_id?: string; response?: { status_code?: number; body?: unknown }; error?: { message?: string } | null })
    .find((l) => l.custom_id === run.externalId);
  if (!line?.response || line.response.status_code !== 200) {
    await updateRun(db, run.externalId, { batchId: null });
    const why = line?.error?.message ?? (line?.response ? `status ${line.response.status_code}` : "no result line for the article");
    throw new StepFailure(`batch ${batch.id}: the request failed (${why})`);
  }
  const completion = line.response.body as OpenAI.Chat.Completions.ChatCompletion;
  const output = replyText(completion, req.outputFormat);
  const usage = { promptTokens: completion.usage?.prompt_tokens ?? 0, completionTokens: completion.usage?.completion_tokens ?? 0 };
  const cost = costOfUsage(model, usage, BATCH_SHARE);
  recordModelUsage(model.id, usage.promptTokens, usage.completionTokens, cost);
  return { state: "done", output, ...usage, cost };
}
