// Who may call workflow-catalog (access-policy.ts): the gateway for clients' workflows and
// article creation, the generation runner for the pinned snapshot it runs.
import { WorkflowSnapshotService } from "../../../proto/gen/articles/workflow_catalog/v1/snapshots_pb.ts";
import { WorkflowCatalogService } from "../../../proto/gen/articles/workflow_catalog/v1/workflows_pb.ts";
import { allow, CALLERS } from "../../kit/src/access-policy.ts";

const { gateway, generationRunner } = CALLERS;

export const workflowCatalogAccess = [
  allow(WorkflowSnapshotService, {
    resolveArticleType: [gateway],
    getSnapshot: [generationRunner],
  }),
  allow(WorkflowCatalogService, {
    listWorkflows: [gateway],
    createStep: [gateway],
    getStep: [gateway],
    updateStep: [gateway],
    deleteStep: [gateway],
    reorderSteps: [gateway],
    duplicateWorkflow: [gateway],
  }),
];
