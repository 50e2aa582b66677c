// Shared by the workflow tests: a tenant with a client, a valid step body, the fields a step and a
// workflow show.
import { apiClient, type ApiClient } from "../harness/http.ts";
import { createTenant, type Tenant, type TenantOptions } from "../harness/tenants.ts";
import type { TestStack } from "../harness/stack.ts";

export interface WorkflowTenant extends Tenant {
  api: ApiClient;
  /** /v1/projects/{projectId}/workflows */
  base: string;
}

export async function workflowTenant(stack: TestStack, opts: TenantOptions = {}): Promise<WorkflowTenant> {
  const tenant = await createTenant(stack, opts);
  return { ...tenant, api: apiClient(stack.baseUrl, tenant.token), base: `/v1/projects/${tenant.projectId}/workflows` };
}

/** A complete, valid create-step body; override any field. */
export function stepBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    article_type: "faq_page",
    step_number: 1,
    step_name: "Draft",
    system: "You are a careful writer.",
    user: "Write an article titled {title} in {language}.",
    output_format: "markdown",
    ...overrides,
  };
}

export const STEP_FIELDS = [
  "id",
  "workflow_id",
  "project_id",
  "article_type",
  "step_number",
  "step_name",
  "step_description",
  "step_icon",
  "system",
  "user",
  "output_format",
  "timeout_seconds",
  "include_additional_context",
  "include_additional_instruction",
  "include_requirements",
  "include_research",
  "include_outline",
  "json_schema",
  "is_custom",
  "is_redacted",
  "created_at",
  "updated_at",
];

// brief_repairs is an addition to spec 2.3 (docs/api.md): the opt-in to length control and brief repairs.
export const WORKFLOW_FIELDS = ["id", "project_id", "name", "slug", "description", "revision", "is_custom", "brief_repairs", "steps", "created_at", "updated_at"];

export const OUTLINE_SCHEMA = {
  type: "object",
  properties: {
    sections: {
      type: "array",
      items: { type: "object", properties: { heading: { type: "string" } }, required: ["heading"], additionalProperties: false },
    },
  },
  required: ["sections"],
  additionalProperties: false,
};
