// The model calls of the finishing work after the last step (length control, brief repairs) as
// the run makes them: each one a finishing checkpoint named by its task ("length 3: extend
// Getting Started", "repair 1: keyword_in_introduction"), so the cost breakdown lists it with its
// tokens and cost, the article's cost includes it, and a later pickup replays its reply instead
// of paying for it again (the choices follow from the replies, so they repeat too).
import type { SnapshotStep } from "../../../../proto/gen/articles/workflow_catalog/v1/snapshots_pb.ts";
import type { Db } from "../db/client.ts";
import { finishingCheckpointOf, saveFinishingCheckpoint } from "./checkpoints.ts";
import type { FinishingCall } from "./length-control.ts";
import { callModel, type CallTurn, type ChatRequest, type ModelCalls } from "./model-call.ts";
import type { CatalogModel } from "./model-catalog.ts";

/** A built-in workflow's article (its steps have roles, custom ones have none) written as markdown. */
export const isBuiltinArticle = (last: SnapshotStep): boolean => last.role !== "" && last.outputFormat === "markdown";

export function finishingCall(
  deps: ModelCalls & { db: Db },
  externalId: string,
  opts: { primary: CatalogModel; fallback?: CatalogModel; temperature: number; timeoutMs: number; signal?: AbortSignal; turn: CallTurn; onWait?: ChatRequest["onWait"] },
): FinishingCall {
  return async (task, prompt) => {
    const done = await finishingCheckpointOf(deps.db, externalId, task);
    if (done) return done.output;
    const reply = await callModel(deps, opts.primary, opts.fallback, {
      ...prompt,
      temperature: opts.temperature,
      outputFormat: "markdown",
      schemaName: "finishing",
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      turn: opts.turn,
      onWait: opts.onWait,
    });
    const saved = await saveFinishingCheckpoint(deps.db, externalId, {
      task,
      model: reply.model,
      promptTokens: reply.promptTokens,
      completionTokens: reply.completionTokens,
      cost: reply.cost,
      output: reply.output,
      waitedMs: reply.waitedMs,
    });
    return saved.output;
  };
}

/** The same calls with their tasks named for the stage they are made in ("after repairs: length 1: extend …"). */
export const namedAfter =
  (stage: string) =>
  (call: FinishingCall): FinishingCall =>
  (task, prompt) =>
    call(`${stage}: ${task}`, prompt);

/** The calls made after the brief repairs ("after repairs: length 1: extend …"). */
export const afterRepairs = namedAfter("after repairs");
