// gRPC handlers of generation-runner: thin translations between proto messages and the domain.
import type { ConnectRouter } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { ModelCatalogService, ModelSchema } from "../../../proto/gen/articles/generation_runner/v1/models_pb.ts";
import { GenerationRunService, type RunSchema } from "../../../proto/gen/articles/generation_runner/v1/runs_pb.ts";
import { CostBreakdownService } from "../../../proto/gen/articles/generation_runner/v1/cost_breakdown_pb.ts";
import { costBreakdownHandlers } from "./rpc-cost-breakdown.ts";
import { ArticleImageService } from "../../../proto/gen/articles/generation_runner/v1/images_pb.ts";
import { invalidFields, throwIfAny } from "../../kit/src/errors.ts";
import type { Db } from "./db/client.ts";
import { imageUrl } from "./domain/article-images.ts";
import { getRunRecord } from "./domain/checkpoints.ts";
import type { ImageStores } from "./domain/image-store.ts";
import { servedImage } from "./domain/served-images.ts";
import * as catalog from "./domain/model-catalog.ts";
import type { ProviderCheck } from "./domain/model-catalog.ts";
import { formatUsd } from "../../kit/src/rules/usd.ts";

const modelMessage = (m: catalog.CatalogModel): MessageInitShape<typeof ModelSchema> => ({
  id: m.id,
  active: m.active,
  supportsBatch: m.supportsBatch,
  inputPricePerMillion: m.inputPricePerMillion,
  outputPricePerMillion: m.outputPricePerMillion,
  fallbackModel: m.fallbackModel ?? undefined,
  requestsPerMinute: m.requestsPerMinute ?? undefined,
  tokensPerMinute: m.tokensPerMinute === null ? undefined : BigInt(m.tokensPerMinute),
  maxConcurrentCalls: m.maxConcurrentCalls ?? undefined,
});

// An int64 limit as a number: beyond 2^53 it is far past every bound, and still refused as such.
const int64Limit = (value: bigint | undefined) => (value === undefined ? undefined : Number(value));

/** An update's rate limit: set, removed (its clear_ flag) or left (neither); both is a field error. */
function limitChange<T>(field: string, value: T | undefined, clear: boolean, errors: Record<string, string[]>): T | null | undefined {
  if (clear && value !== undefined) errors[field] = [`Set ${field} or clear_${field}, not both.`];
  return clear ? null : value;
}

async function runMessage(db: Db, externalId: string, serving: ImageServing): Promise<MessageInitShape<typeof RunSchema>> {
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
    images: images.map((i) => ({
      position: i.position,
      model: i.model,
      size: i.size,
      prompt: i.prompt,
      byteSize: i.byteSize,
      mediaType: i.mediaType,
      imageId: i.imageId,
      url: imageUrl(serving.publicBaseUrl, i),
      alt: i.alt,
      width: i.width,
      height: i.height,
      aspectRatio: i.aspectRatio,
    })),
    omittedImages: run.omittedImages,
    cost: formatUsd(cost),
    lastError: run.lastError ?? undefined,
    finishedAt: run.finishedAt ? timestampFromDate(run.finishedAt) : undefined,
    batchId: run.batchId ?? undefined,
    humanizedVersionId: run.humanizedVersionId === null ? undefined : BigInt(run.humanizedVersionId),
    webhookEnqueued: run.webhookEnqueuedAt !== null,
  };
}

export interface ImageServing {
  stores: ImageStores;
  publicBaseUrl: string;
}

/**
 * `seeded` settles once the catalog's seed models are in place; `announceChange` tells the
 * gateways the catalog changed (kit/src/model-catalog-changes.ts), before the change's answer.
 */
export function generationRunnerRoutes(db: Db, reachable: ProviderCheck, seeded: Promise<void>, images: ImageServing, announceChange: () => Promise<void>) {
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
        const added = await catalog.addModel(db, {
          id: m.id,
          active: m.active,
          supportsBatch: m.supportsBatch,
          inputPricePerMillion: m.inputPricePerMillion,
          outputPricePerMillion: m.outputPricePerMillion,
          fallbackModel: m.fallbackModel ?? null,
          requestsPerMinute: m.requestsPerMinute ?? null,
          tokensPerMinute: int64Limit(m.tokensPerMinute) ?? null,
          maxConcurrentCalls: m.maxConcurrentCalls ?? null,
        });
        await announceChange();
        return { model: modelMessage(added) };
      },
      async updateModel(req) {
        const errors: Record<string, string[]> = {};
        const changes: catalog.ModelChanges = {
          active: req.active,
          supportsBatch: req.supportsBatch,
          inputPricePerMillion: req.inputPricePerMillion,
          outputPricePerMillion: req.outputPricePerMillion,
          fallbackModel: req.fallbackModel,
          requestsPerMinute: limitChange("requests_per_minute", req.requestsPerMinute, req.clearRequestsPerMinute, errors),
          tokensPerMinute: limitChange("tokens_per_minute", int64Limit(req.tokensPerMinute), req.clearTokensPerMinute, errors),
          maxConcurrentCalls: limitChange("max_concurrent_calls", req.maxConcurrentCalls, req.clearMaxConcurrentCalls, errors),
        };
        throwIfAny(errors);
        const updated = await catalog.updateModel(db, req.id, changes);
        await announceChange();
        return { model: modelMessage(updated) };
      },
    });

    router.service(CostBreakdownService, costBreakdownHandlers(db));

    router.service(GenerationRunService, {
      getRun: async (req) => ({ run: await runMessage(db, req.externalId, images) }),
    });

    router.service(ArticleImageService, {
      async getImage(req) {
        const { image, extension, data } = await servedImage(db, images.stores, req.imageId);
        return { mediaType: image.mediaType, extension, data, sha256: image.sha256, width: image.width, height: image.height };
      },
    });
  };
}
