// Workflows (spec 2.3) and workflow steps (spec 2.4) as the public API shows them. Only custom
// workflows ever reach this presenter, so is_custom is always true and is_redacted always false.
import type { Workflow, WorkflowStep } from "../../../proto/gen/articles/workflow_catalog/v1/workflows_pb.ts";
import { iso } from "../../../services/kit/src/public-article.ts";

export function presentStep(step: WorkflowStep) {
  return {
    id: Number(step.id),
    workflow_id: Number(step.workflowId),
    project_id: Number(step.projectId),
    article_type: step.articleType,
    step_number: step.stepNumber,
    step_name: step.stepName,
    step_description: step.stepDescription ?? null,
    step_icon: step.stepIcon ?? null,
    system: step.system,
    user: step.user,
    output_format: step.outputFormat,
    timeout_seconds: step.timeoutSeconds,
    include_additional_context: step.includeAdditionalContext,
    include_additional_instruction: step.includeAdditionalInstruction,
    include_requirements: step.includeRequirements,
    include_research: step.includeResearch,
    include_outline: step.includeOutline,
    json_schema: step.jsonSchema === undefined ? null : (JSON.parse(step.jsonSchema) as Record<string, unknown>),
    is_custom: true,
    is_redacted: false,
    created_at: iso(step.createdAt),
    updated_at: iso(step.updatedAt),
  };
}

export function presentWorkflow(workflow: Workflow) {
  return {
    id: Number(workflow.id),
    project_id: Number(workflow.projectId),
    name: workflow.name,
    slug: workflow.slug,
    description: workflow.description ?? null,
    revision: workflow.revision,
    is_custom: true,
    brief_repairs: workflow.briefRepairs,
    steps: workflow.steps.map(presentStep),
    created_at: iso(workflow.createdAt),
    updated_at: iso(workflow.updatedAt),
  };
}
