// The fields of the workflow endpoints' bodies, once. The gateway checks presence and JSON types
// from these tables (workflows/step-input.ts); the lengths, ranges and formats are the step limits
// workflow-catalog enforces, taken from the kit's one copy of them and only documented here.
import {
  DEFAULT_TIMEOUT_SECONDS,
  MAX_ARTICLE_TYPE_LENGTH,
  MAX_STEP_ICON_LENGTH,
  MAX_STEP_NAME_LENGTH,
  MAX_TIMEOUT_SECONDS,
  MIN_TIMEOUT_SECONDS,
  OUTPUT_FORMATS,
} from "../../../services/kit/src/rules/workflow-steps.ts";
import { pageQueryFields, type FieldSpec, type FieldTable } from "../openapi/fields.ts";

export const INT32_MAX = 2_147_483_647;

const FLAG_NOTE = "Makes the matching prompt variable available to this step's prompts.";

/** POST /v1/projects/{project}/workflows. */
export const STEP_FIELDS = {
  article_type: { type: "string", required: true, max: MAX_ARTICLE_TYPE_LENGTH, description: "The workflow (slug) the step belongs to; a new one creates the workflow. Not a reserved built-in name.", example: "recipe" },
  step_number: { type: "integer", required: true, min: 1, max: INT32_MAX, description: "Position from 1, unique within the workflow; steps run in ascending order.", example: 1 },
  step_name: { type: "string", required: true, max: MAX_STEP_NAME_LENGTH, description: "Shown as current_step on articles while the step runs.", example: "Draft" },
  step_description: { type: "string", nullable: true, description: "Free-text note." },
  step_icon: { type: "string", nullable: true, max: MAX_STEP_ICON_LENGTH, description: "Dashboard icon name." },
  system: { type: "string", required: true, description: "System prompt (template: {title}, {step_1_output}, ...).", example: "You are a food writer." },
  user: { type: "string", required: true, description: "User prompt (template).", example: "Write a recipe article titled {title}." },
  output_format: { type: "string", required: true, enum: OUTPUT_FORMATS, description: "What the step returns.", example: "markdown" },
  timeout_seconds: { type: "integer", nullable: true, min: MIN_TIMEOUT_SECONDS, max: MAX_TIMEOUT_SECONDS, default: DEFAULT_TIMEOUT_SECONDS, description: "Per-step time budget; on expiry the step fails." },
  include_additional_context: { type: "boolean", default: false, description: `{additional_context}: ${FLAG_NOTE}` },
  include_additional_instruction: { type: "boolean", default: false, description: `{additional_instruction}: ${FLAG_NOTE}` },
  include_requirements: { type: "boolean", default: false, description: `{requirements}: ${FLAG_NOTE}` },
  include_research: { type: "boolean", default: false, description: `{research} (the sources' text) and {sources} (their numbered list): ${FLAG_NOTE}` },
  include_outline: { type: "boolean", default: false, description: `{outline}: ${FLAG_NOTE}` },
  brief_repairs: {
    type: "boolean",
    description:
      "Sets the workflow's brief_repairs: its articles get length control and brief repairs after the last step, as the built-in workflows' do (a markdown last step only). Omitted: left as it is (false for a new workflow).",
  },
  json_schema: {
    type: "object",
    nullable: true,
    description:
      "Structured-output schema for output_format json: every object has additionalProperties false and a required list of all its properties; arrays have items. An update that moves the step off json keeps it (unused) and the step uses it again when it is json again; null clears it.",
  },
} as const satisfies FieldTable;

/** The fields null clears on update; null on any other field is refused. */
export const CLEARABLE_ON_UPDATE = ["step_description", "step_icon", "json_schema"] as const;

/** PATCH and PUT /v1/projects/{project}/workflows/{workflow}: the same fields, every one optional. */
export const STEP_UPDATE_FIELDS: FieldTable = Object.fromEntries(
  Object.entries(STEP_FIELDS).map(([name, f]) => {
    const { required: _required, default: _default, ...rest } = f as FieldSpec;
    return [name, { ...rest, nullable: (CLEARABLE_ON_UPDATE as readonly string[]).includes(name) } as FieldSpec];
  }),
);

/** The entries of REORDER_FIELDS.steps. */
export const STEP_POSITION_FIELDS = {
  id: { type: "integer", required: true, min: 1, max: Number.MAX_SAFE_INTEGER, description: "A step id of this project.", example: 12 },
  step_number: { type: "integer", required: true, min: 1, max: INT32_MAX, description: "Its new position.", example: 2 },
} as const satisfies FieldTable;

/** POST /v1/projects/{project}/workflows/reorder. */
export const REORDER_FIELDS = {
  steps: {
    type: "array",
    required: true,
    minItems: 1,
    items: { type: "object", properties: STEP_POSITION_FIELDS, description: "A step and its new position." },
    description: "New positions: each entry the step id and its new step_number.",
    example: [{ id: 12, step_number: 2 }],
  },
} as const satisfies FieldTable;

/** POST /v1/projects/{project}/workflows/duplicate. */
export const DUPLICATE_FIELDS = {
  source_article_type: { type: "string", required: true, description: "A custom type of this project or a built-in type to copy.", example: "blog_post" },
  new_article_type: { type: "string", required: true, max: MAX_ARTICLE_TYPE_LENGTH, description: "The new custom type (not reserved, not existing).", example: "my_blog_post" },
} as const satisfies FieldTable;

/** GET /v1/projects/{project}/workflows. */
export const WORKFLOW_LIST_QUERY = {
  article_type: { type: "string", description: "Only the workflow with this slug (at most one match; a value no slug can have matches none)." },
  ...pageQueryFields("Workflows"),
} as const satisfies FieldTable;
