// articles.api.v1.WorkflowService: a project's custom workflows over gRPC for internal teams.
// Each method passes the same gates as /v1 (API key, subscription, the "workflows" rate limit)
// and runs the same operation (workflows/workflow-operations.ts), translating only between the
// proto messages and the public JSON shape, whose wire names the messages share.
import { fromJson, toJson, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import {
  StepChangesSchema,
  StepInputSchema,
  WorkflowSchema,
  WorkflowService,
  WorkflowStepSchema,
  type StepChanges,
  type StepInput,
} from "../../../proto/gen/articles/api/v1/workflows_pb.ts";
import { validationError } from "../errors.ts";
import type { WorkflowOperations } from "../workflows/workflow-operations.ts";
import { pageMetaOf, queryNumber, type PublicCalls } from "./public-calls.ts";

const BUCKET = "workflows";
/** The step fields /v1 clears with null. */
const CLEARABLE = ["step_description", "step_icon", "json_schema"];

const stepOf = (step: unknown) => fromJson(WorkflowStepSchema, step as JsonValue, { ignoreUnknownFields: true });
const workflowOf = (workflow: unknown) => fromJson(WorkflowSchema, workflow as JsonValue, { ignoreUnknownFields: true });

/** The body /v1 takes for a new step. */
function stepBody(step: StepInput | undefined): JsonObject {
  return step ? (toJson(StepInputSchema, step, { useProtoFieldName: true }) as JsonObject) : {};
}

/** The body /v1 takes for a change: the fields set, and null for each field cleared. */
function changesBody(changes: StepChanges | undefined, clear: string[]): JsonObject {
  const body = changes ? (toJson(StepChangesSchema, changes, { useProtoFieldName: true }) as JsonObject) : {};
  const unknown = clear.filter((field) => !CLEARABLE.includes(field));
  if (unknown.length) throw validationError({ clear_fields: [`Only ${CLEARABLE.join(", ")} can be cleared; not ${unknown.join(", ")}.`] });
  for (const field of clear) {
    if (field in body) throw validationError({ clear_fields: [`${field} is both set and cleared.`] });
    body[field] = null;
  }
  return body;
}

export function workflowService(router: ConnectRouter, calls: PublicCalls, workflows: WorkflowOperations): void {
  const { answer } = calls;
  const caller = calls.callerOf(BUCKET);
  router.service(WorkflowService, {
    listWorkflows: (req, ctx) =>
      answer("ListWorkflows", async () => {
        const page = await workflows.list(await caller(ctx), String(req.projectId), { article_type: req.articleType, page: queryNumber(req.page), per_page: queryNumber(req.perPage) });
        return { workflows: page.workflows.map(workflowOf), meta: pageMetaOf(page.meta) };
      }),
    createWorkflowStep: (req, ctx) =>
      answer("CreateWorkflowStep", async () => {
        const { step, warnings } = await workflows.createStep(await caller(ctx), String(req.projectId), stepBody(req.step));
        return { step: stepOf(step), warnings };
      }),
    getWorkflowStep: (req, ctx) => answer("GetWorkflowStep", async () => ({ step: stepOf(await workflows.getStep(await caller(ctx), String(req.projectId), String(req.stepId))) })),
    updateWorkflowStep: (req, ctx) =>
      answer("UpdateWorkflowStep", async () => {
        const body = changesBody(req.changes, req.clearFields);
        const { step, warnings } = await workflows.updateStep(await caller(ctx), String(req.projectId), String(req.stepId), body);
        return { step: stepOf(step), warnings };
      }),
    deleteWorkflowStep: (req, ctx) => answer("DeleteWorkflowStep", async () => workflows.deleteStep(await caller(ctx), String(req.projectId), String(req.stepId))),
    reorderWorkflowSteps: (req, ctx) =>
      answer("ReorderWorkflowSteps", async () => {
        const body = { steps: req.steps.map((s) => ({ id: Number(s.id), step_number: s.stepNumber })) };
        await workflows.reorder(await caller(ctx), String(req.projectId), body);
        return {};
      }),
    duplicateWorkflow: (req, ctx) =>
      answer("DuplicateWorkflow", async () => {
        const body = { source_article_type: req.sourceArticleType, new_article_type: req.newArticleType };
        return { workflow: workflowOf(await workflows.duplicate(await caller(ctx), String(req.projectId), body)) };
      }),
  });
}
