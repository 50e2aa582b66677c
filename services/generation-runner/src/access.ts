// Who may call generation-runner (access-policy.ts): the gateway resolves models and reads images
// and costs for clients; the model catalog's changes are the operator's alone.
import { CostBreakdownService } from "../../../proto/gen/articles/generation_runner/v1/cost_breakdown_pb.ts";
import { ArticleImageService } from "../../../proto/gen/articles/generation_runner/v1/images_pb.ts";
import { ModelCatalogService } from "../../../proto/gen/articles/generation_runner/v1/models_pb.ts";
import { GenerationRunService } from "../../../proto/gen/articles/generation_runner/v1/runs_pb.ts";
import { RunErasureService } from "../../../proto/gen/articles/generation_runner/v1/erasure_pb.ts";
import { OriginalityCheckService } from "../../../proto/gen/articles/generation_runner/v1/originality_pb.ts";
import { allow, CALLERS } from "../../kit/src/access-policy.ts";

const { gateway, webhookDispatcher, operator } = CALLERS;

export const generationRunnerAccess = [
  allow(ModelCatalogService, {
    resolveModel: [gateway],
    listModels: [gateway, operator],
    addModel: [operator],
    updateModel: [operator],
  }),
  allow(GenerationRunService, {
    getRun: [operator],
  }),
  allow(ArticleImageService, {
    // The dispatcher uploads an article's images to the sites it publishes to.
    getImage: [gateway, webhookDispatcher],
  }),
  allow(CostBreakdownService, {
    getCostBreakdown: [gateway],
  }),
  // The gateway asks for an edited version's score.
  allow(OriginalityCheckService, {
    checkVersion: [gateway],
  }),
  // An article's erasure: DELETE /v1/articles/{id} through the gateway, or the operator on request.
  allow(RunErasureService, {
    eraseRun: [gateway, operator],
  }),
];
