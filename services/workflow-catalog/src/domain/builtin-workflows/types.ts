// Shapes of the built-in workflows. Only the step fields of spec 2.4 that matter to running a step,
// plus the step's role in the pipeline so the runner can find e.g. the meta description output.

import type { OutputFormat } from "../../../../kit/src/rules/workflow-steps.ts";

export type { OutputFormat };

/** What a built-in step contributes: research notes, outline, draft, meta description, final polish. */
export type BuiltinStepRole = "research" | "outline" | "draft" | "meta" | "polish";

/** A JSON schema (checked by checkJsonSchemaRule). */
export type JsonSchema = Readonly<Record<string, unknown>>;

export interface BuiltinStep {
  readonly step_number: number;
  readonly step_name: string;
  readonly step_description: string | null;
  readonly step_icon: string | null;
  readonly system: string;
  readonly user: string;
  readonly output_format: OutputFormat;
  readonly timeout_seconds: number;
  readonly include_additional_context: boolean;
  readonly include_additional_instruction: boolean;
  readonly include_requirements: boolean;
  readonly include_research: boolean;
  readonly include_outline: boolean;
  readonly json_schema: JsonSchema | null;
  readonly role: BuiltinStepRole;
}

export interface BuiltinWorkflow {
  /** The reserved article_type. */
  readonly article_type: string;
  readonly name: string;
  readonly description: string;
  /** Bumped whenever the service changes this pipeline, so pinned snapshots can tell versions apart. */
  readonly revision: number;
  /** Ascending step_number. */
  readonly steps: readonly BuiltinStep[];
}
