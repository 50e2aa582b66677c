// The per-plan caps on a project's custom workflows (kit/src/rules/tenant-caps.ts): steps in one
// workflow, characters in one prompt field, workflows in one project. The gateway passes the caps
// in force with each change, as it passes the project access it checked. Counts are decided under
// the locks of the change that would pass them (the workflow's row lock, a project lock for new
// workflows), so concurrent requests on any number of replicas cannot together go past a cap.
// Only what adds is refused: a workflow already over a cap keeps running, and may shrink.
import { and, eq, ne, sql } from "drizzle-orm";
import { invalidFields, type FieldErrors } from "../../../kit/src/errors.ts";
import type { Db } from "../db/client.ts";
import { workflows, workflowSteps } from "../db/schema.ts";
import type { WorkflowRow } from "./revisions.ts";
import { characterCount, type StepFields } from "./step-rules.ts";

/** The caps in force; Infinity where the caller passed none. */
export interface WorkflowCaps {
  stepsPerWorkflow: number;
  promptCharacters: number;
  workflowsPerProject: number;
}

export const NO_CAPS: WorkflowCaps = { stepsPerWorkflow: Infinity, promptCharacters: Infinity, workflowsPerProject: Infinity };

const PROMPT_FIELDS = ["system", "user"] as const;

const promptTooLong = (field: string, length: number, cap: number) =>
  `The ${field} prompt has ${length.toLocaleString("en-US")} characters; this plan allows at most ${cap.toLocaleString("en-US")} in one prompt (prompt_characters).`;

/**
 * The prompts of a step past the cap, as field errors. With `before` (an update), only a prompt
 * made longer is refused: a step stored before the cap keeps working and may be edited shorter.
 */
export function checkPromptLengths(errors: FieldErrors, caps: WorkflowCaps, step: StepFields, before?: StepFields): void {
  for (const field of PROMPT_FIELDS) {
    const length = characterCount(step[field]);
    if (length > caps.promptCharacters && (!before || length > characterCount(before[field]))) (errors[field] ??= []).push(promptTooLong(field, length, caps.promptCharacters));
  }
}

/** A whole workflow about to be copied (duplicate), as errors of the field naming its source. */
export function checkCopiedSteps(errors: FieldErrors, field: string, caps: WorkflowCaps, source: string, steps: StepFields[]): void {
  const problems: string[] = [];
  if (steps.length > caps.stepsPerWorkflow) {
    problems.push(`The "${source}" workflow has ${steps.length} steps; this plan allows at most ${caps.stepsPerWorkflow} in one workflow (steps_per_workflow).`);
  }
  for (const step of steps) {
    const own: FieldErrors = {};
    checkPromptLengths(own, caps, step);
    for (const message of Object.values(own).flat()) problems.push(`Step ${step.step_number} of "${source}": ${message}`);
  }
  if (problems.length > 0) (errors[field] ??= []).push(...problems);
}

const workflowFull = (slug: string, steps: number, cap: number) =>
  `The "${slug}" workflow already has ${steps} steps; this plan allows at most ${cap} in one workflow (steps_per_workflow).`;
const projectFull = (workflows: number, cap: number) =>
  `The project already has ${workflows} custom workflows; this plan allows at most ${cap} in one project (workflows_per_project).`;

const stepCount = async (tx: Db, workflowId: number): Promise<number> =>
  (await tx.select({ steps: sql<number>`count(*)::int` }).from(workflowSteps).where(eq(workflowSteps.workflowId, workflowId)))[0]!.steps;

/** Before a step joins `workflow` (locked by the caller): refused when it already holds the cap. */
export async function assertRoomForStep(tx: Db, workflow: WorkflowRow, caps: WorkflowCaps, field: string): Promise<void> {
  if (caps.stepsPerWorkflow === Infinity) return;
  const steps = await stepCount(tx, workflow.id);
  if (steps >= caps.stepsPerWorkflow) throw invalidFields({ [field]: [workflowFull(workflow.slug, steps, caps.stepsPerWorkflow)] });
}

/**
 * Before a change that may create the project's workflow `slug`: refused when the type is new and
 * the project already holds the cap. New workflows of one project are decided one at a time, under
 * a transaction-scoped lock of the project, so the count read is the count written; a step for a
 * workflow that exists takes no such lock.
 */
export async function assertRoomForWorkflow(tx: Db, projectId: number, slug: string, caps: WorkflowCaps, field: string): Promise<void> {
  if (caps.workflowsPerProject === Infinity || (await countWorkflows(tx, projectId, slug)).own > 0) return;
  await tx.execute(sql`select pg_advisory_xact_lock(hashtext('workflow_catalog:new-workflow'), hashtext(${String(projectId)}))`);
  // Counted without the type itself: one that appeared while this change waited makes none more.
  const { own, others } = await countWorkflows(tx, projectId, slug);
  if (own === 0 && others >= caps.workflowsPerProject) throw invalidFields({ [field]: [projectFull(others, caps.workflowsPerProject)] });
}

/**
 * A step joining the project's workflow `slug`, checked without writing (validate_only, or a
 * request refused for other fields): a full workflow or a full project joins the other problems
 * under `field`, so one 422 names them all. Read without the change's locks: the change itself
 * decides again under them (assertRoomForWorkflow, assertRoomForStep).
 */
export async function noteRoomForStep(tx: Db, errors: FieldErrors, projectId: number, slug: string, caps: WorkflowCaps, field: string): Promise<void> {
  if (errors[field] || (caps.stepsPerWorkflow === Infinity && caps.workflowsPerProject === Infinity)) return;
  const [existing] = await tx.select({ id: workflows.id }).from(workflows).where(and(eq(workflows.projectId, projectId), eq(workflows.slug, slug)));
  if (existing) {
    const steps = caps.stepsPerWorkflow === Infinity ? 0 : await stepCount(tx, existing.id);
    if (steps >= caps.stepsPerWorkflow) errors[field] = [workflowFull(slug, steps, caps.stepsPerWorkflow)];
    return;
  }
  const { others } = await countWorkflows(tx, projectId, slug);
  if (others >= caps.workflowsPerProject) errors[field] = [projectFull(others, caps.workflowsPerProject)];
}

async function countWorkflows(tx: Db, projectId: number, slug: string): Promise<{ own: number; others: number }> {
  const [counts] = await tx
    .select({ own: sql<number>`count(*) filter (where ${eq(workflows.slug, slug)})::int`, others: sql<number>`count(*) filter (where ${ne(workflows.slug, slug)})::int` })
    .from(workflows)
    .where(eq(workflows.projectId, projectId));
  return counts!;
}
