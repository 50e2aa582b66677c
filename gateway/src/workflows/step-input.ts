// Public request bodies of the workflow endpoints (spec 4.4–4.10) turned into catalog requests.
// The gateway checks JSON types and presence only, plus integers too large for the request message;
// workflow-catalog owns every other rule (names, lengths, ranges, formats, schemas, templates,
// numbering) and reports all of them together in the same 422 shape. Step bodies come back with
// the gateway's own field errors rather than throwing them, so the route can have the catalog
// check the remaining fields and report everything at once.
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  NullableStepField,
  type CreateStepRequestSchema,
  type DuplicateWorkflowRequestSchema,
  type StepPositionSchema,
  type UpdateStepRequestSchema,
} from "../../../proto/gen/articles/workflow_catalog/v1/workflows_pb.ts";
import type { FieldErrors } from "../../../services/kit/src/errors.ts";
import { MalformedBody } from "../plugins/json-body.ts";
import { validationError } from "../errors.ts";
import { Validator, type QueryValues } from "../validation.ts";
import { numericId } from "../../../services/kit/src/rules/identifiers.ts";
import { pageWindow, type PageWindow } from "../../../services/kit/src/rules/page-window.ts";
import { isStorableText } from "../../../services/kit/src/rules/storable-text.ts";
import type { FieldSpec } from "../openapi/fields.ts";
import { DUPLICATE_FIELDS, INT32_MAX, STEP_FIELDS as S, STEP_POSITION_FIELDS } from "./step-fields.ts";

// Messages of the catalog's range rules, used for values no request message could carry.
const OUT_OF_RANGE: Record<string, string> = {
  step_number: `The step number field must be between 1 and ${INT32_MAX}.`,
  timeout_seconds: "The timeout seconds field must be between 30 and 600.",
};
const FLAGS = [
  ["include_additional_context", "includeAdditionalContext"],
  ["include_additional_instruction", "includeAdditionalInstruction"],
  ["include_requirements", "includeRequirements"],
  ["include_research", "includeResearch"],
  ["include_outline", "includeOutline"],
] as const;

// Request fields without the ones the route supplies from the path.
type CreateStep = Omit<MessageInitShape<typeof CreateStepRequestSchema>, "$typeName" | "projectId">;
type UpdateStep = Omit<MessageInitShape<typeof UpdateStepRequestSchema>, "$typeName" | "projectId" | "stepId">;
type Duplicate = Omit<MessageInitShape<typeof DuplicateWorkflowRequestSchema>, "$typeName" | "projectId">;

function validatorOf(body: unknown): Validator {
  if (body instanceof MalformedBody) throw validationError({ body: [body.reason] });
  const v = new Validator(body ?? {});
  v.check(); // a body that is not an object is the one error worth reporting
  return v;
}

/** An integer the catalog will range-check; one beyond 32 bits fails here with the catalog's message. */
function int32(v: Validator, field: string, opts: { required?: boolean } = {}): number | undefined {
  const value = v.integer(field, { ...opts, nullable: !opts.required });
  if (typeof value !== "number") return undefined;
  if (Math.abs(value) > INT32_MAX) return void v.fail(field, OUT_OF_RANGE[field]);
  return value;
}

/** Presence only from a field table: the catalog checks the bounds, with its own messages. */
const presence = (f: FieldSpec) => ({ required: f.required, nullable: f.nullable });

const schemaText = (schema: Record<string, unknown> | null | undefined) => (schema ? JSON.stringify(schema) : undefined);

/** A step body as a catalog request; fields named in `errors` failed here and are left at their defaults. */
export interface StepInput<T> {
  input: T;
  errors: FieldErrors;
}

/** POST /v1/projects/{project}/workflows. */
export function createStepInput(body: unknown): StepInput<CreateStep> {
  const v = validatorOf(body);
  const input: CreateStep = {
    articleType: v.string("article_type", presence(S.article_type)) ?? "",
    stepNumber: int32(v, "step_number", presence(S.step_number)) ?? 0,
    stepName: v.string("step_name", presence(S.step_name)) ?? "",
    stepDescription: v.string("step_description", presence(S.step_description)) ?? undefined,
    stepIcon: v.string("step_icon", presence(S.step_icon)) ?? undefined,
    system: v.string("system", presence(S.system)) ?? "",
    user: v.string("user", presence(S.user)) ?? "",
    outputFormat: v.string("output_format", presence(S.output_format)) ?? "",
    timeoutSeconds: int32(v, "timeout_seconds", presence(S.timeout_seconds)),
    jsonSchema: schemaText(v.object("json_schema", presence(S.json_schema))),
  };
  for (const [field, key] of FLAGS) input[key] = v.boolean(field) ?? false;
  // The workflow's opt-in: unset leaves it as it is.
  input.briefRepairs = v.boolean("brief_repairs") ?? undefined;
  return { input, errors: v.errors };
}

/**
 * PATCH and PUT /v1/projects/{project}/workflows/{workflow}: every field optional, omitted fields
 * unchanged. step_description, timeout_seconds and include_outline are accepted like the fields
 * spec 4.7 lists, since they are part of the step and a client editing it expects to change them.
 * null clears step_description, step_icon and json_schema; on any other field it is an error.
 */
export function updateStepInput(body: unknown): StepInput<UpdateStep> {
  const v = validatorOf(body);
  for (const field of ["article_type", "step_number", "step_name", "system", "user", "output_format", "timeout_seconds", "brief_repairs", ...FLAGS.map(([f]) => f)]) {
    if (v.input[field] === null) v.fail(field, `The ${field.replace(/_/g, " ")} field must not be null.`);
  }
  const cleared: NullableStepField[] = [];
  const nullable = <T>(value: T | null | undefined, field: NullableStepField): T | undefined => {
    if (value === null) cleared.push(field);
    return value ?? undefined;
  };
  const input: UpdateStep = {
    articleType: v.string("article_type") ?? undefined,
    stepNumber: int32(v, "step_number"),
    stepName: v.string("step_name") ?? undefined,
    stepDescription: nullable(v.string("step_description", { nullable: true }), NullableStepField.STEP_DESCRIPTION),
    stepIcon: nullable(v.string("step_icon", { nullable: true }), NullableStepField.STEP_ICON),
    system: v.string("system") ?? undefined,
    user: v.string("user") ?? undefined,
    outputFormat: v.string("output_format") ?? undefined,
    timeoutSeconds: int32(v, "timeout_seconds"),
    jsonSchema: schemaText(nullable(v.object("json_schema", { nullable: true }), NullableStepField.JSON_SCHEMA)),
  };
  for (const [field, key] of FLAGS) input[key] = v.boolean(field);
  input.briefRepairs = v.boolean("brief_repairs") ?? undefined;
  return { input: { ...input, clearedFields: cleared }, errors: v.errors };
}

/** POST /v1/projects/{project}/workflows/reorder: `steps`, at least one `{id, step_number}`. */
export function reorderInput(body: unknown): MessageInitShape<typeof StepPositionSchema>[] {
  const v = validatorOf(body);
  const steps = v.input.steps;
  if (steps === undefined || steps === null) v.fail("steps", "The steps field is required.");
  else if (!Array.isArray(steps)) v.fail("steps", "The steps field must be an array.");
  else if (steps.length === 0) v.fail("steps", "The steps field must have at least 1 item.");
  const positions: MessageInitShape<typeof StepPositionSchema>[] = [];
  if (Array.isArray(steps)) {
    steps.forEach((entry, i) => {
      const item = new Validator(entry);
      if (!item.valid) return v.fail(`steps.${i}`, `The steps.${i} field must be an object with id and step_number.`);
      const id = item.integer("id", STEP_POSITION_FIELDS.id);
      const stepNumber = item.integer("step_number", STEP_POSITION_FIELDS.step_number);
      for (const [field, messages] of Object.entries(item.errors)) {
        for (const message of messages) v.fail(`steps.${i}.${field}`, message.replace(`The ${field.replace(/_/g, " ")} field`, `The steps.${i}.${field} field`));
      }
      if (typeof id === "number" && typeof stepNumber === "number") positions.push({ stepId: BigInt(id), stepNumber });
    });
  }
  v.check();
  return positions;
}

/** POST /v1/projects/{project}/workflows/duplicate. */
export function duplicateInput(body: unknown): Duplicate {
  const v = validatorOf(body);
  const input = {
    sourceArticleType: v.string("source_article_type", presence(DUPLICATE_FIELDS.source_article_type)) ?? "",
    newArticleType: v.string("new_article_type", presence(DUPLICATE_FIELDS.new_article_type)) ?? "",
  };
  v.check();
  return input;
}

/**
 * GET /v1/projects/{project}/workflows: article_type, page, per_page. The list answers no 422
 * (spec 4.4): the page window is clamped, and an article_type no slug can be (undecodable, or
 * text Postgres cannot hold) matches nothing.
 */
export function listQuery(query: QueryValues): PageWindow & { articleType?: string; unknownType: boolean } {
  const raw = query.article_type;
  const unknownType = raw === null || (raw !== undefined && !isStorableText(raw));
  return { articleType: unknownType || raw === "" ? undefined : raw, unknownType, ...pageWindow(query.page, query.per_page) };
}

/** A numeric path id (leading zeros allowed), or null (the route answers 404) for anything else. */
export const pathId = numericId;
