// gRPC handlers of generation-runner: thin translations between proto messages and the domain.
import type { ConnectRouter } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ModelCatalogService, ModelSchema } from "../../../proto/gen/articles/generation_runner/v1/models_pb.ts";
import { GenerationRunService, type RunSchema } from "../../../proto/gen/articles/generation_runner/v1/runs_pb.ts";
import { invalidFields } from "../../kit/src/errors.ts";
import type { Db } from "./db/client.ts";
import { getRunRecord } from "./domain/checkpoints.ts";
import * as catalog from "./domain/model-catalog.ts";
import type { ProviderCheck } from "./domain/model-catalog.ts";
import { formatUsd } from "./domain/usd.ts";

const modelMessage = (m: catalog.CatalogModel): MessageInitShape<typeof ModelSchema> => ({
  id: m.id,
  active: m.active,
  supportsBatch: m.supportsBatch,
  inputPricePerMillion: m.inputPricePerMillion,
  outputPricePerMillion: m.outputPricePerMillion,
  fallbackModel: m.fallbackModel ?? undefined,
});

async function runMessage(db: Db, externalId: string): Promise<MessageInitShape<typeof RunSchema>> {
  const { run, steps, images, cost } = await getRunRecord(db, externalId);
  return {
    externalId: run.externalId,
    workflowId: BigInt(run.workflowId),
    workflowRevision: run.workflowRevision,
    articleType: run.articleType,
    requestedModel: run.requestedModel,
    pickups: run.pickups,
    steps: steps.map((s) => ({
      stepNumber: s.stepNumber,
      stepName: s.stepName,
      model: s.model,
      usedFallback: s.usedFallback,
      promptTokens: s.promptTokens,
      completionTokens: s.completionTokens,
      cost: formatUsd(s.cost),
      output: s.output,
      completedAt: timestampFromDate(s.completedAt),
      batched: s.batched,
    })),
    images: images.map((i) => ({ position: i.position, model: i.model, size: i.size, prompt: i.prompt, byteSize: i.data.length, mediaType: i.mediaType })),
    cost: formatUsd(cost),
    lastError: run.lastError ?? undefined,
    finishedAt: run.finishedAt ? timestampFromDate(run.finishedAt) : undefined,
    batchId: run.batchId ?? undefined,
    humanizedVersionId: run.humanizedVersionId === null ? undefined : BigInt(run.humanizedVersionId),
    webhookEnqueued: run.webhookEnqueuedAt !== null,
  };
}

/** `seeded` settles once the catalog's seed models are in place. */
export function generationRunnerRoutes(db: Db, reachable: ProviderCheck, seeded: Promise<void>) {
  return (router: ConnectRouter) => {
    router.service(ModelCatalogService, {
      async resolveModel(req) {
        await seeded;
        return { model: modelMessage(await catalog.resolveModel(db, req.model, reachable)) };
      },
      async listModels() {
        await seeded;
        return { models: (await catalog.listModels(db)).map(modelMessage) };
      },
      async addModel(req) {
        await seeded;
        if (!req.model) throw invalidFields({ model: ["model is required."] });
        const m = req.model;
        return {
          model: modelMessage(
            await catalog.addModel(db, {
              id: m.id,
              active: m.active,
              supportsBatch: m.supportsBatch,
              inputPricePerMillion: m.inputPricePerMillion,
              outputPricePerMillion: m.outputPricePerMillion,
              fallbackModel: m.fallbackModel ?? null,
            }),
          ),
        };
      },
      updateModel: async (req) => ({
        model: modelMessage(
          await catalog.updateModel(db, req.id, {
            active: req.active,
            supportsBatch: req.supportsBatch,
            inputPricePerMillion: req.inputPricePerMillion,
            outputPricePerMillion: req.outputPricePerMillion,
            fallbackModel: req.fallbackModel,
          }),
        ),
      }),
    });

    router.service(GenerationRunService, {
      getRun: async (req) => ({ run: await runMessage(db, req.externalId) }),
    });
  };
}
