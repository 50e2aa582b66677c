// The rules a custom step must satisfy (spec 2.3–2.5, 4.5, 4.7): names, lengths, ranges, the
// output format, the JSON schema rule and the template vocabulary. The limits are shared with the
// gateway (kit/src/rules/workflow-steps.ts); the checks are the catalog's. Problems are collected
// per public field name; suspicious but legal prompt content becomes warnings.
import type { FieldErrors } from "../../../kit/src/errors.ts";
import { findUnknownVariables, gatedVariablesWithoutFlag, stepOutputReferences, GATED_VARIABLES } from "../../../kit/src/rules/prompt-template.ts";
import { isReservedArticleType } from "./builtin-workflows/index.ts";
import { checkJsonSchemaRule } from "./json-schema-rule.ts";
import {
  isOutputFormat,
  MAX_ARTICLE_TYPE_LENGTH,
  MAX_STEP_ICON_LENGTH,
  MAX_STEP_NAME_LENGTH,
  MAX_STEP_NUMBER,
  MAX_TIMEOUT_SECONDS,
  MIN_TIMEOUT_SECONDS,
  OUTPUT_FORMATS,
} from "../../../kit/src/rules/workflow-steps.ts";

export const RESERVED_NAME_MESSAGE = "custom workflows cannot use reserved global article type names";

/** A step's own fields (json_schema parsed); output_format is checked by checkStep. */
export interface StepFields {
  step_number: number;
  step_name: string;
  step_description: string | null;
  step_icon: string | null;
  system: string;
  user: string;
  output_format: string;
  timeout_seconds: number;
  include_additional_context: boolean;
  include_additional_instruction: boolean;
  include_requirements: boolean;
  include_research: boolean;
  include_outline: boolean;
  json_schema: Record<string, unknown> | null;
}

const label = (field: string) => field.replace(/_/g, " ");

/** Limits count characters as a person does (code points), so an emoji is one. */
/** Characters as a person counts them (code points): an emoji is one, as every limit counts it. */
export const characterCount = (value: string) => [...value].length;

function fail(errors: FieldErrors, field: string, message: string): void {
  (errors[field] ??= []).push(message);
}

function checkText(errors: FieldErrors, field: string, value: string, max?: number): void {
  if (value.trim() === "") fail(errors, field, `The ${label(field)} field is required.`);
  else if (max !== undefined && characterCount(value) > max) fail(errors, field, `The ${label(field)} field must not be greater than ${max} characters.`);
}

/** A name a custom workflow may take (article_type, new_article_type). */
export function checkCustomTypeName(errors: FieldErrors, field: string, name: string): void {
  checkText(errors, field, name, MAX_ARTICLE_TYPE_LENGTH);
  if (!errors[field] && isReservedArticleType(name)) fail(errors, field, RESERVED_NAME_MESSAGE);
}

/** A name that may refer to an existing type, custom or built-in (source_article_type). */
export function checkTypeReference(errors: FieldErrors, field: string, name: string): void {
  checkText(errors, field, name, MAX_ARTICLE_TYPE_LENGTH);
}

/** The JSON text of a schema as an object, or a field error. Schemas always arrive as JSON text. */
export function parseJsonSchema(errors: FieldErrors, text: string): Record<string, unknown> | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    fail(errors, "json_schema", "The json schema field must be a JSON object.");
    return null;
  }
  if (value === null) return null;
  if (typeof value !== "object" || Array.isArray(value)) {
    fail(errors, "json_schema", "The json schema field must be a JSON object.");
    return null;
  }
  return value as Record<string, unknown>;
}

/**
 * Every rule of one complete step (a new one, or an existing one with its changes applied).
 * `schemaNamed`: the request itself names a json_schema (a new step's non-null one). Only a schema
 * named for a step whose output is not json is refused: one kept from before while output_format
 * is not json stays unused until the step is json again (an update changes only what it names).
 */
export function checkStep(errors: FieldErrors, step: StepFields, schemaNamed = step.json_schema !== null): void {
  if (!Number.isInteger(step.step_number) || step.step_number < 1 || step.step_number > MAX_STEP_NUMBER) {
    fail(errors, "step_number", `The step number field must be between 1 and ${MAX_STEP_NUMBER}.`);
  }
  checkText(errors, "step_name", step.step_name, MAX_STEP_NAME_LENGTH);
  if (step.step_icon !== null && characterCount(step.step_icon) > MAX_STEP_ICON_LENGTH) {
    fail(errors, "step_icon", `The step icon field must not be greater than ${MAX_STEP_ICON_LENGTH} characters.`);
  }
  if (!isOutputFormat(step.output_format)) {
    fail(errors, "output_format", `The selected output format is invalid. Allowed: ${OUTPUT_FORMATS.join(", ")}.`);
  }
  if (!Number.isInteger(step.timeout_seconds) || step.timeout_seconds < MIN_TIMEOUT_SECONDS || step.timeout_seconds > MAX_TIMEOUT_SECONDS) {
    fail(errors, "timeout_seconds", `The timeout seconds field must be between ${MIN_TIMEOUT_SECONDS} and ${MAX_TIMEOUT_SECONDS}.`);
  }
  for (const field of ["system", "user"] as const) {
    checkText(errors, field, step[field]);
    const unknown = findUnknownVariables(step[field]);
    if (unknown.length > 0) {
      const names = unknown.map((name) => `{${name}}`).join(", ");
      fail(errors, field, `The ${field} prompt uses unknown template variable${unknown.length > 1 ? "s" : ""} ${names}.`);
    }
  }
  if (step.json_schema !== null) {
    if (step.output_format !== "json") {
      if (schemaNamed) fail(errors, "json_schema", "The json schema field can only be used with output_format json.");
    } else {
      const problem = checkJsonSchemaRule(step.json_schema);
      if (problem) fail(errors, "json_schema", problem);
    }
  }
}

/**
 * Legal prompt content that is probably a mistake: a {step_N_output} of a step that does not run
 * earlier (numbers resolve at run time, spec 2.5) and a gated variable whose flag is off.
 */
export function promptWarnings(step: StepFields): string[] {
  const warnings: string[] = [];
  for (const field of ["system", "user"] as const) {
    for (const position of stepOutputReferences(step[field])) {
      if (position >= step.step_number) {
        warnings.push(
          `The ${field} prompt references {step_${position}_output}, but step ${position} does not run before step ${step.step_number}; ` +
            "references resolve by step number at run time and are empty unless an earlier step has that number.",
        );
      }
    }
    for (const name of gatedVariablesWithoutFlag(step[field], step)) {
      warnings.push(`The ${field} prompt uses {${name}}, which stays empty unless ${GATED_VARIABLES[name]} is set.`);
    }
  }
  return warnings;
}
