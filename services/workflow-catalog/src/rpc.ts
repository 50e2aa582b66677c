// gRPC handlers of workflow-catalog: thin translations between proto messages and the domain.
import type { ConnectRouter } from "@connectrpc/connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { PinnedWorkflowSchema, SnapshotStepSchema, WorkflowSnapshotService } from "../../../proto/gen/articles/workflow_catalog/v1/snapshots_pb.ts";
import {
  NullableStepField,
  WorkflowCatalogService,
  WorkflowSchema,
  WorkflowStepSchema,
  type UpdateStepRequest,
  type WorkflowCaps as WorkflowCapsMessage,
} from "../../../proto/gen/articles/workflow_catalog/v1/workflows_pb.ts";
import { invalidFields } from "../../kit/src/errors.ts";
import { jsonHasUnstorableText, UNSTORABLE_TEXT } from "../../kit/src/rules/storable-text.ts";
import type { Db } from "./db/client.ts";
import type { SnapshotStepRecord } from "./db/schema.ts";
import * as catalog from "./domain/custom-workflows.ts";
import * as snapshots from "./domain/pinned-snapshots.ts";
import type { StepRow } from "./domain/revisions.ts";
import type { WorkflowCaps } from "./domain/workflow-caps.ts";

/** The caps the gateway passed; a cap it left at 0 (or a request without caps) is no cap. */
const capsOf = (caps: WorkflowCapsMessage | undefined): WorkflowCaps => ({
  stepsPerWorkflow: caps?.stepsPerWorkflow || Infinity,
  promptCharacters: caps?.promptCharacters || Infinity,
  workflowsPerProject: caps?.workflowsPerProject || Infinity,
});

const pinnedMessage = (p: snapshots.PinnedWorkflow): MessageInitShape<typeof PinnedWorkflowSchema> => ({
  workflowId: BigInt(p.workflowId),
  revision: p.revision,
  articleType: p.articleType,
  builtin: p.builtin,
  stepCount: p.stepCount,
  hasResearchStep: p.hasResearchStep,
  briefRepairs: p.briefRepairs,
});

const snapshotStepMessage = (s: SnapshotStepRecord): MessageInitShape<typeof SnapshotStepSchema> => ({
  stepNumber: s.step_number,
  stepName: s.step_name,
  system: s.system,
  user: s.user,
  outputFormat: s.output_format,
  timeoutSeconds: s.timeout_seconds,
  includeAdditionalContext: s.include_additional_context,
  includeAdditionalInstruction: s.include_additional_instruction,
  includeRequirements: s.include_requirements,
  includeResearch: s.include_research,
  includeOutline: s.include_outline,
  jsonSchema: s.json_schema === null || s.json_schema === undefined ? undefined : JSON.stringify(s.json_schema),
  role: s.role,
});

const stepMessage = (s: StepRow, articleType: string): MessageInitShape<typeof WorkflowStepSchema> => ({
  id: BigInt(s.id),
  workflowId: BigInt(s.workflowId),
  projectId: BigInt(s.projectId),
  articleType,
  stepNumber: s.stepNumber,
  stepName: s.stepName,
  stepDescription: s.stepDescription ?? undefined,
  stepIcon: s.stepIcon ?? undefined,
  system: s.system,
  user: s.user,
  outputFormat: s.outputFormat,
  timeoutSeconds: s.timeoutSeconds,
  includeAdditionalContext: s.includeAdditionalContext,
  includeAdditionalInstruction: s.includeAdditionalInstruction,
  includeRequirements: s.includeRequirements,
  includeResearch: s.includeResearch,
  includeOutline: s.includeOutline,
  jsonSchema: s.jsonSchema === null || s.jsonSchema === undefined ? undefined : JSON.stringify(s.jsonSchema),
  createdAt: timestampFromDate(s.createdAt),
  updatedAt: timestampFromDate(s.updatedAt),
});

const workflowMessage = ({ workflow: w, steps }: catalog.WorkflowView): MessageInitShape<typeof WorkflowSchema> => ({
  id: BigInt(w.id),
  projectId: BigInt(w.projectId),
  name: w.name,
  slug: w.slug,
  description: w.description ?? undefined,
  revision: w.revision,
  briefRepairs: w.briefRepairs,
  steps: steps.map((s) => stepMessage(s, w.slug)),
  createdAt: timestampFromDate(w.createdAt),
  updatedAt: timestampFromDate(w.updatedAt),
});

const NULLABLE_FIELD: Partial<Record<NullableStepField, "step_description" | "step_icon" | "json_schema">> = {
  [NullableStepField.STEP_DESCRIPTION]: "step_description",
  [NullableStepField.STEP_ICON]: "step_icon",
  [NullableStepField.JSON_SCHEMA]: "json_schema",
};

/**
 * A schema arrives as JSON text, so NUL or an unpaired surrogate written as a \u escape passes the
 * text check of every call and only shows once parsed; jsonb would refuse it. Malformed JSON is
 * left to the catalog's own json_schema rule.
 */
function requireStorableSchema(text: string | undefined): void {
  if (text === undefined) return;
  let schema: unknown;
  try {
    schema = JSON.parse(text);
  } catch {
    return;
  }
  if (jsonHasUnstorableText(schema)) throw invalidFields({ json_schema: [`The json schema field ${UNSTORABLE_TEXT}.`] });
}

function changesOf(req: UpdateStepRequest): catalog.StepChanges {
  requireStorableSchema(req.jsonSchema);
  const changes: catalog.StepChanges = {
    article_type: req.articleType,
    step_number: req.stepNumber,
    step_name: req.stepName,
    step_description: req.stepDescription,
    step_icon: req.stepIcon,
    system: req.system,
    user: req.user,
    output_format: req.outputFormat,
    timeout_seconds: req.timeoutSeconds,
    include_additional_context: req.includeAdditionalContext,
    include_additional_instruction: req.includeAdditionalInstruction,
    include_requirements: req.includeRequirements,
    include_research: req.includeResearch,
    include_outline: req.includeOutline,
    json_schema: req.jsonSchema,
  };
  for (const cleared of req.clearedFields) {
    const field = NULLABLE_FIELD[cleared];
    if (field) changes[field] = null;
  }
  return changes;
}

export function workflowCatalogRoutes(db: Db) {
  return (router: ConnectRouter) => {
    router.service(WorkflowSnapshotService, {
      resolveArticleType: async (req) => ({
        workflow: pinnedMessage(await snapshots.resolveArticleType(db, Number(req.projectId), req.articleType)),
      }),
      async getSnapshot(req) {
        const snapshot = await snapshots.getSnapshot(db, Number(req.workflowId), req.revision, req.articleType);
        return { workflow: pinnedMessage(snapshot.workflow), steps: snapshot.steps.map(snapshotStepMessage) };
      },
    });

    router.service(WorkflowCatalogService, {
      async listWorkflows(req) {
        const page = await catalog.listWorkflows(db, Number(req.projectId), { articleType: req.articleType, page: req.page, perPage: req.perPage });
        return { workflows: page.workflows.map(workflowMessage), total: page.total, page: page.page, perPage: page.perPage };
      },
      async createStep(req) {
        requireStorableSchema(req.jsonSchema);
        const created = await catalog.createStep(db, Number(req.projectId), {
          article_type: req.articleType,
          step_number: req.stepNumber,
          step_name: req.stepName,
          step_description: req.stepDescription ?? null,
          step_icon: req.stepIcon ?? null,
          system: req.system,
          user: req.user,
          output_format: req.outputFormat,
          timeout_seconds: req.timeoutSeconds ?? null,
          include_additional_context: req.includeAdditionalContext,
          include_additional_instruction: req.includeAdditionalInstruction,
          include_requirements: req.includeRequirements,
          include_research: req.includeResearch,
          include_outline: req.includeOutline,
          json_schema: req.jsonSchema ?? null,
        }, { validateOnly: req.validateOnly, caps: capsOf(req.caps), briefRepairs: req.briefRepairs });
        return created ? { step: stepMessage(created.step.step, created.step.articleType), warnings: created.warnings } : {};
      },
      async getStep(req) {
        const { step, articleType } = await catalog.getStep(db, Number(req.projectId), Number(req.stepId));
        return { step: stepMessage(step, articleType) };
      },
      async updateStep(req) {
        const updated = await catalog.updateStep(db, Number(req.projectId), Number(req.stepId), changesOf(req), { validateOnly: req.validateOnly, caps: capsOf(req.caps), briefRepairs: req.briefRepairs });
        return updated ? { step: stepMessage(updated.step.step, updated.step.articleType), warnings: updated.warnings } : {};
      },
      async deleteStep(req) {
        const deleted = await catalog.deleteStep(db, Number(req.projectId), Number(req.stepId));
        return { workflowId: BigInt(deleted.workflowId), articleType: deleted.articleType, workflowDeleted: deleted.workflowDeleted };
      },
      async reorderSteps(req) {
        const positions = req.positions.map((p) => ({ stepId: Number(p.stepId), stepNumber: p.stepNumber }));
        const revised = await catalog.reorderSteps(db, Number(req.projectId), positions);
        return { workflows: revised.map((w) => ({ workflowId: BigInt(w.id), articleType: w.slug, revision: w.revision })) };
      },
      duplicateWorkflow: async (req) => ({
        workflow: workflowMessage(await catalog.duplicateWorkflow(db, Number(req.projectId), req.sourceArticleType, req.newArticleType, capsOf(req.caps))),
      }),
    });
  };
}
