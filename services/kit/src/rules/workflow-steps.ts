// The limits of a custom workflow step (spec 2.3–2.5, 4.5): lengths, the timeout range and the
// output formats. workflow-catalog enforces them when it stores a step (domain/step-rules.ts) and
// the gateway states them in the public schema (it checks only presence and JSON types), so both
// read this one copy and a changed limit changes the API and the catalog together.

export const OUTPUT_FORMATS = ["text", "json", "markdown"] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export const MAX_ARTICLE_TYPE_LENGTH = 255;
export const MAX_STEP_NAME_LENGTH = 255;
export const MAX_STEP_ICON_LENGTH = 50;
export const MIN_TIMEOUT_SECONDS = 30;
export const MAX_TIMEOUT_SECONDS = 600;
/** The budget of a step created without timeout_seconds: enough for a long draft on a slow model. */
export const DEFAULT_TIMEOUT_SECONDS = 300;
/** Step numbers travel as int32. */
export const MAX_STEP_NUMBER = 2_147_483_647;

export function isOutputFormat(value: string): value is OutputFormat {
  return (OUTPUT_FORMATS as readonly string[]).includes(value);
}
