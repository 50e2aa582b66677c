// Custom workflows of a project (spec 2.3, 4.4–4.10): steps are created, changed, moved, deleted,
// reordered and duplicated one transaction at a time, each holding the row locks of the workflows
// it touches and closing with commitRevision (revision + immutable snapshot).
import { and, asc, eq, inArray, ne, sql } from "drizzle-orm";
import { invalidFields, notFound, throwIfAny, type FieldErrors } from "../../../kit/src/errors.ts";
import type { Db } from "../db/client.ts";
import { workflows, workflowSteps } from "../db/schema.ts";
import { builtinWorkflow, starterPrompts } from "./builtin-workflows/index.ts";
import {
  commitRevision,
  inChange,
  lockOrCreateWorkflow,
  lockWorkflowById,
  RetryChange,
  sqlState,
  stepsOf,
  violatedConstraint,
  type StepRow,
  type WorkflowRow,
} from "./revisions.ts";
import {
  checkCustomTypeName,
  checkStep,
  checkTypeReference,
  parseJsonSchema,
  promptWarnings,
  type StepFields,
} from "./step-rules.ts";
import { DEFAULT_TIMEOUT_SECONDS, type OutputFormat } from "../../../kit/src/rules/workflow-steps.ts";
import { pageWindow } from "../../../kit/src/rules/page-window.ts";
import { preparedPerDatabase } from "../../../kit/src/prepared-statements.ts";
import { assertRoomForStep, assertRoomForWorkflow, checkCopiedSteps, checkPromptLengths, NO_CAPS, noteRoomForStep, type WorkflowCaps } from "./workflow-caps.ts";

export const STEP_NOT_FOUND = "Workflow step not found.";
export const FOREIGN_STEPS = "One or more steps do not belong to this project; no step was changed.";

/** A step with its workflow's slug (the step's article_type). */
export interface StepView {
  step: StepRow;
  articleType: string;
}

export interface WorkflowView {
  workflow: WorkflowRow;
  steps: StepRow[];
}

/** A new step as the client sent it; json_schema is JSON text. */
export interface NewStep extends Omit<StepFields, "timeout_seconds" | "json_schema"> {
  article_type: string;
  /** null: DEFAULT_TIMEOUT_SECONDS. */
  timeout_seconds: number | null;
  json_schema: string | null;
}

/** Changes to a step; undefined leaves a field as it is, null clears a nullable one. */
export type StepChanges = Partial<Omit<StepFields, "json_schema">> & {
  article_type?: string;
  /** JSON text, or null to clear. */
  json_schema?: string | null;
};

// ---- conversions ----------------------------------------------------------------------------

function fieldsOf(step: StepRow): StepFields {
  return {
    step_number: step.stepNumber,
    step_name: step.stepName,
    step_description: step.stepDescription,
    step_icon: step.stepIcon,
    system: step.system,
    user: step.user,
    output_format: step.outputFormat,
    timeout_seconds: step.timeoutSeconds,
    include_additional_context: step.includeAdditionalContext,
    include_additional_instruction: step.includeAdditionalInstruction,
    include_requirements: step.includeRequirements,
    include_research: step.includeResearch,
    include_outline: step.includeOutline,
    json_schema: (step.jsonSchema as Record<string, unknown> | null) ?? null,
  };
}

function columnsOf(fields: StepFields) {
  return {
    stepNumber: fields.step_number,
    stepName: fields.step_name,
    stepDescription: fields.step_description,
    stepIcon: fields.step_icon,
    system: fields.system,
    user: fields.user,
    outputFormat: fields.output_format as OutputFormat,
    timeoutSeconds: fields.timeout_seconds,
    includeAdditionalContext: fields.include_additional_context,
    includeAdditionalInstruction: fields.include_additional_instruction,
    includeRequirements: fields.include_requirements,
    includeResearch: fields.include_research,
    includeOutline: fields.include_outline,
    jsonSchema: fields.json_schema,
  };
}

/**
 * A step's fields with the changes applied. Every field the change does not name keeps its value
 * (spec 4.7), json_schema included: kept while output_format is not json, it is used again when
 * the step goes back to json.
 */
function applyChanges(current: StepFields, changes: StepChanges, errors: FieldErrors): StepFields {
  const { article_type: _moveTo, json_schema, ...own } = changes;
  const defined = Object.fromEntries(Object.entries(own).filter(([, value]) => value !== undefined)) as Partial<StepFields>;
  const next: StepFields = { ...current, ...defined };
  if (json_schema !== undefined) next.json_schema = json_schema === null ? null : parseJsonSchema(errors, json_schema);
  return next;
}

/** Whether applying a change left every field as it was (jsonb keeps no key order, so the schema is compared as a value). */
const unchanged = (before: StepFields, after: StepFields) => Bun.deepEquals(before, after);

const stepNumberTakenMessage = (stepNumber: number, slug: string) =>
  `The step number ${stepNumber} is already taken by another step of the "${slug}" workflow.`;

async function assertStepNumberFree(tx: Db, workflow: WorkflowRow, stepNumber: number, exceptStepId?: number): Promise<void> {
  const conditions = [eq(workflowSteps.workflowId, workflow.id), eq(workflowSteps.stepNumber, stepNumber)];
  if (exceptStepId !== undefined) conditions.push(ne(workflowSteps.id, exceptStepId));
  const [taken] = await tx.select({ id: workflowSteps.id }).from(workflowSteps).where(and(...conditions));
  if (taken) throw invalidFields({ step_number: [stepNumberTakenMessage(stepNumber, workflow.slug)] });
}

/**
 * Reports a taken step number with the other field errors of a request. Read without a lock: the
 * check that decides is assertStepNumberFree, made again under the workflow's lock.
 */
async function noteTakenStepNumber(tx: Db, errors: FieldErrors, projectId: number, slug: string, stepNumber: number, exceptStepId?: number): Promise<void> {
  if (errors.step_number || errors.article_type) return;
  const conditions = [eq(workflows.projectId, projectId), eq(workflows.slug, slug), eq(workflowSteps.stepNumber, stepNumber)];
  if (exceptStepId !== undefined) conditions.push(ne(workflowSteps.id, exceptStepId));
  const [taken] = await tx
    .select({ id: workflowSteps.id })
    .from(workflowSteps)
    .innerJoin(workflows, eq(workflows.id, workflowSteps.workflowId))
    .where(and(...conditions));
  if (taken) errors.step_number = [stepNumberTakenMessage(stepNumber, slug)];
}

/** The unique constraints back up the checks made under the locks; their violations stay 422s. */
function asFieldError(error: unknown, slug: string, stepNumber?: number): never {
  if (sqlState(error) === "23505") {
    if (violatedConstraint(error) === "workflow_steps_number") {
      throw invalidFields({ step_number: [stepNumber === undefined ? "The step number has already been taken." : stepNumberTakenMessage(stepNumber, slug)] });
    }
    if (violatedConstraint(error) === "workflows_project_slug") throw invalidFields({ article_type: ["The article type has already been taken."] });
  }
  throw error;
}

/**
 * The project's step, with its workflow locked. A step moved to another workflow between the two
 * reads starts the change over, so the lock held is always the one of the step's workflow.
 */
async function lockStep(tx: Db, projectId: number, stepId: number): Promise<{ step: StepRow; workflow: WorkflowRow }> {
  const [found] = await tx
    .select({ workflowId: workflowSteps.workflowId })
    .from(workflowSteps)
    .where(and(eq(workflowSteps.id, stepId), eq(workflowSteps.projectId, projectId)));
  if (!found) throw notFound(STEP_NOT_FOUND);
  const workflow = await lockWorkflowById(tx, found.workflowId);
  const [step] = await tx
    .select()
    .from(workflowSteps)
    .where(and(eq(workflowSteps.id, stepId), eq(workflowSteps.workflowId, found.workflowId)));
  if (!workflow || !step) throw new RetryChange();
  return { step, workflow };
}

/**
 * Before a move: workflows are locked in id order, so when the target's id is lower it is locked
 * before the step's own workflow. Crossing moves (A→B and B→A) then queue instead of deadlocking.
 */
async function lockLowerMoveTarget(tx: Db, projectId: number, stepId: number, targetSlug: string): Promise<void> {
  const [target] = await tx
    .select({ id: workflows.id })
    .from(workflows)
    .where(and(eq(workflows.projectId, projectId), eq(workflows.slug, targetSlug)));
  const [step] = await tx
    .select({ workflowId: workflowSteps.workflowId })
    .from(workflowSteps)
    .where(and(eq(workflowSteps.id, stepId), eq(workflowSteps.projectId, projectId)));
  if (target && step && target.id < step.workflowId) await lockWorkflowById(tx, target.id);
}

// ---- reads ----------------------------------------------------------------------------------

export async function getStep(db: Db, projectId: number, stepId: number): Promise<StepView> {
  const [row] = await db
    .select({ step: workflowSteps, slug: workflows.slug })
    .from(workflowSteps)
    .innerJoin(workflows, eq(workflows.id, workflowSteps.workflowId))
    .where(and(eq(workflowSteps.id, stepId), eq(workflowSteps.projectId, projectId)));
  if (!row) throw notFound(STEP_NOT_FOUND);
  return { step: row.step, articleType: row.slug };
}

export interface WorkflowPage {
  workflows: WorkflowView[];
  total: number;
  page: number;
  perPage: number;
}

/**
 * A page of the project's workflows (of one type, or of all) with their steps and the total, in
 * one statement: one snapshot of the catalog for the three, as a read-only transaction of three
 * statements gave, in one round trip and built once (kit/src/prepared-statements.ts), where the
 * transaction's five round trips and drizzle building its three queries on every call were most
 * of a list's cost here. The total is the row every page joins onto, so an empty page still
 * carries it.
 */
const pageStatements = preparedPerDatabase((db: Db) => {
  const pageOf = (ofType: boolean, name: string) => {
    const projectId = eq(workflows.projectId, sql.placeholder("projectId"));
    const where = ofType ? and(projectId, eq(workflows.slug, sql.placeholder("articleType"))) : projectId;
    const totals = db.select({ total: sql<number>`count(*)::int`.as("total") }).from(workflows).where(where).as("totals");
    const page = db
      .select({ id: workflows.id })
      .from(workflows)
      .where(where)
      .orderBy(sql`${workflows.slug} collate "C"`)
      .limit(sql.placeholder("limit"))
      .offset(sql.placeholder("offset"))
      .as("page");
    return db
      .select({ total: totals.total, workflow: workflows, step: workflowSteps })
      .from(totals)
      .leftJoin(page, sql`true`)
      .leftJoin(workflows, eq(workflows.id, page.id))
      .leftJoin(workflowSteps, eq(workflowSteps.workflowId, workflows.id))
      .orderBy(sql`${workflows.slug} collate "C"`, asc(workflowSteps.stepNumber))
      .prepare(name);
  };
  return { all: pageOf(false, "catalog_workflow_page"), ofType: pageOf(true, "catalog_workflow_page_of_type") };
});

/** Ordered by slug (byte order, the same on every database), steps by step_number; the page window clamped as every list clamps it. */
export async function listWorkflows(db: Db, projectId: number, query: { articleType?: string; page: number; perPage: number }): Promise<WorkflowPage> {
  const { page, perPage } = pageWindow(query.page, query.perPage);
  const window = { projectId, limit: perPage, offset: (page - 1) * perPage };
  const statements = pageStatements(db);
  const rows = query.articleType === undefined ? await statements.all.execute(window) : await statements.ofType.execute({ ...window, articleType: query.articleType });
  const views = new Map<number, WorkflowView>();
  for (const { workflow, step } of rows) {
    if (!workflow) continue;
    let view = views.get(workflow.id);
    if (!view) views.set(workflow.id, (view = { workflow, steps: [] }));
    if (step) view.steps.push(step);
  }
  return { workflows: [...views.values()], total: rows[0]?.total ?? 0, page, perPage };
}

// ---- changes --------------------------------------------------------------------------------

/**
 * How a change is made. validateOnly: every problem is thrown as usual, and nothing is written.
 * caps: the plan's caps the change must stay within (workflow-caps.ts); none when not given.
 * briefRepairs: the workflow's opt-in to length control and brief repairs, set with the step.
 */
export interface ChangeOptions {
  validateOnly?: boolean;
  caps?: WorkflowCaps;
  /** Sets the workflow's brief_repairs (the step's workflow after the change); undefined leaves it as it is. */
  briefRepairs?: boolean;
}

/** Creates one step; the first step of a new type creates its workflow (spec 2.3 rule 2). With validateOnly, a valid step gives null. */
export async function createStep(db: Db, projectId: number, input: NewStep, opts: ChangeOptions = {}): Promise<{ step: StepView; warnings: string[] } | null> {
  const errors: FieldErrors = {};
  checkCustomTypeName(errors, "article_type", input.article_type);
  const { article_type: slug, ...own } = input;
  const fields: StepFields = {
    ...own,
    timeout_seconds: input.timeout_seconds ?? DEFAULT_TIMEOUT_SECONDS,
    json_schema: input.json_schema === null ? null : parseJsonSchema(errors, input.json_schema),
  };
  checkStep(errors, fields);
  const caps = opts.caps ?? NO_CAPS;
  checkPromptLengths(errors, caps, fields);
  if (Object.keys(errors).length > 0 || opts.validateOnly) {
    await noteTakenStepNumber(db, errors, projectId, slug, fields.step_number);
    await noteRoomForStep(db, errors, projectId, slug, caps, "article_type");
  }
  throwIfAny(errors);
  if (opts.validateOnly) return null;
  const step = await inChange(db, async (tx) => {
    await assertRoomForWorkflow(tx, projectId, slug, caps, "article_type");
    const { workflow } = await lockOrCreateWorkflow(tx, projectId, slug);
    await assertRoomForStep(tx, workflow, caps, "article_type");
    await assertStepNumberFree(tx, workflow, fields.step_number);
    const [row] = await tx
      .insert(workflowSteps)
      .values({ ...columnsOf(fields), workflowId: workflow.id, projectId })
      .returning()
      .catch((error) => asFieldError(error, slug, fields.step_number));
    await commitRevision(tx, workflow.id, opts.briefRepairs);
    return { step: row, articleType: workflow.slug };
  });
  return { step, warnings: promptWarnings(fields) };
}

/**
 * Changes the given fields (PATCH and PUT alike). A new article_type moves the step: the target
 * workflow is created when absent, the source deleted when the move empties it. A request that
 * changes nothing writes nothing and answers the step as it is.
 */
export async function updateStep(db: Db, projectId: number, stepId: number, changes: StepChanges, opts: ChangeOptions = {}): Promise<{ step: StepView; warnings: string[] } | null> {
  return inChange(db, async (tx) => {
    if (changes.article_type !== undefined) await lockLowerMoveTarget(tx, projectId, stepId, changes.article_type);
    const { step, workflow } = await lockStep(tx, projectId, stepId);
    const errors: FieldErrors = {};
    if (changes.article_type !== undefined) checkCustomTypeName(errors, "article_type", changes.article_type);
    const current = fieldsOf(step);
    const fields = applyChanges(current, changes, errors);
    checkStep(errors, fields, typeof changes.json_schema === "string");
    const caps = opts.caps ?? NO_CAPS;
    checkPromptLengths(errors, caps, fields, current);
    const moving = changes.article_type !== undefined && changes.article_type !== workflow.slug;
    if (Object.keys(errors).length > 0 || opts.validateOnly) {
      await noteTakenStepNumber(tx, errors, projectId, moving ? changes.article_type! : workflow.slug, fields.step_number, step.id);
      if (moving) await noteRoomForStep(tx, errors, projectId, changes.article_type!, caps, "article_type");
    }
    throwIfAny(errors);
    if (opts.validateOnly) return null;
    // A change that changes nothing is not a change: no new revision, updated_at as it was.
    const optInUnchanged = opts.briefRepairs === undefined || opts.briefRepairs === workflow.briefRepairs;
    if (!moving && unchanged(current, fields) && optInUnchanged) return { step: { step, articleType: workflow.slug }, warnings: promptWarnings(fields) };

    let target = workflow;
    if (moving) {
      await assertRoomForWorkflow(tx, projectId, changes.article_type!, caps, "article_type");
      target = (await lockOrCreateWorkflow(tx, projectId, changes.article_type!)).workflow;
      await assertRoomForStep(tx, target, caps, "article_type");
    }
    await assertStepNumberFree(tx, target, fields.step_number, step.id);
    const [row] = await tx
      .update(workflowSteps)
      .set({ ...columnsOf(fields), workflowId: target.id, updatedAt: new Date() })
      .where(eq(workflowSteps.id, step.id))
      .returning()
      .catch((error) => asFieldError(error, target.slug, fields.step_number));
    await commitRevision(tx, target.id, opts.briefRepairs);
    if (moving) await commitRevision(tx, workflow.id);
    return { step: { step: row, articleType: target.slug }, warnings: promptWarnings(fields) };
  });
}

/** Deletes one step; the last one takes its workflow with it. Numbers are not closed up. */
export async function deleteStep(db: Db, projectId: number, stepId: number): Promise<{ workflowId: number; articleType: string; workflowDeleted: boolean }> {
  return inChange(db, async (tx) => {
    const { step, workflow } = await lockStep(tx, projectId, stepId);
    await tx.delete(workflowSteps).where(eq(workflowSteps.id, step.id));
    const after = await commitRevision(tx, workflow.id);
    return { workflowId: workflow.id, articleType: workflow.slug, workflowDeleted: after === null };
  });
}

export interface StepPosition {
  stepId: number;
  stepNumber: number;
}

/**
 * New numbers for several steps at once: all or nothing, each touched workflow one revision up.
 * A step id that is not the project's fails the whole request with notFound(FOREIGN_STEPS).
 */
export async function reorderSteps(db: Db, projectId: number, positions: StepPosition[]): Promise<WorkflowRow[]> {
  const errors: FieldErrors = {};
  if (positions.length === 0) errors.steps = ["The steps field must have at least 1 item."];
  const seen = new Set<number>();
  positions.forEach((p, i) => {
    if (seen.has(p.stepId)) errors[`steps.${i}.id`] = [`The steps.${i}.id field has a duplicate value.`];
    seen.add(p.stepId);
    if (!Number.isInteger(p.stepNumber) || p.stepNumber < 1) errors[`steps.${i}.step_number`] = [`The steps.${i}.step_number field must be at least 1.`];
  });
  throwIfAny(errors);

  return inChange(db, async (tx) => {
    const ids = positions.map((p) => p.stepId);
    const owned = await tx
      .select({ id: workflowSteps.id, workflowId: workflowSteps.workflowId })
      .from(workflowSteps)
      .where(and(inArray(workflowSteps.id, ids), eq(workflowSteps.projectId, projectId)));
    if (owned.length !== ids.length) throw notFound(FOREIGN_STEPS);

    // Locked in id order, so two reorders over the same workflows never wait on each other in a cycle.
    const workflowIds = [...new Set(owned.map((s) => s.workflowId))].sort((a, b) => a - b);
    const locked: WorkflowRow[] = [];
    for (const id of workflowIds) {
      const workflow = await lockWorkflowById(tx, id);
      if (!workflow) throw new RetryChange();
      locked.push(workflow);
    }
    const steps = await tx.select().from(workflowSteps).where(inArray(workflowSteps.workflowId, workflowIds));
    const byId = new Map(steps.map((s) => [s.id, s]));
    if (ids.some((id) => !byId.has(id))) throw new RetryChange(); // moved or deleted before the locks

    const finalNumber = new Map(steps.map((s) => [s.id, s.stepNumber]));
    for (const p of positions) finalNumber.set(p.stepId, p.stepNumber);
    const collisions: FieldErrors = {};
    positions.forEach((p, i) => {
      const own = byId.get(p.stepId)!;
      const clash = steps.find((s) => s.id !== p.stepId && s.workflowId === own.workflowId && finalNumber.get(s.id) === p.stepNumber);
      if (clash) {
        const slug = locked.find((w) => w.id === own.workflowId)!.slug;
        collisions[`steps.${i}.step_number`] = [stepNumberTakenMessage(p.stepNumber, slug)];
      }
    });
    throwIfAny(collisions);

    // Two statements: the moved steps first step aside to negative numbers, then take their new
    // ones, so swaps never trip the unique (workflow_id, step_number) halfway through.
    await tx
      .update(workflowSteps)
      .set({ stepNumber: sql`-${workflowSteps.stepNumber}` })
      .where(inArray(workflowSteps.id, ids));
    const cases = sql.join(
      positions.map((p) => sql`when ${p.stepId}::bigint then ${p.stepNumber}::integer`),
      sql` `,
    );
    await tx
      .update(workflowSteps)
      .set({ stepNumber: sql`case ${workflowSteps.id} ${cases} end`, updatedAt: new Date() })
      .where(inArray(workflowSteps.id, ids));

    const revised: WorkflowRow[] = [];
    for (const id of workflowIds) revised.push((await commitRevision(tx, id))!.workflow);
    return revised;
  });
}

/**
 * Copies every step of a source type into a new custom type of the project. A custom source is
 * copied verbatim; a built-in one keeps its structure, formats, timeouts, flags and schemas but
 * gets generic starter prompts, because built-in prompts never leave the service. A custom type
 * of the source's name wins over the built-in.
 */
export async function duplicateWorkflow(db: Db, projectId: number, sourceType: string, newType: string, caps: WorkflowCaps = NO_CAPS): Promise<WorkflowView> {
  const errors: FieldErrors = {};
  checkTypeReference(errors, "source_article_type", sourceType);
  checkCustomTypeName(errors, "new_article_type", newType);

  // Both names are looked up even when the other failed, so every problem is reported at once.
  return inChange(db, async (tx) => {
    // Shared lock: the source cannot change while its steps are read, but may be read by others.
    const [custom] = await tx
      .select()
      .from(workflows)
      .where(and(eq(workflows.projectId, projectId), eq(workflows.slug, sourceType)))
      .for("share");
    let copies: StepFields[] | null = null;
    if (custom) {
      copies = (await stepsOf(tx, custom.id)).map(fieldsOf);
    } else {
      const builtin = builtinWorkflow(sourceType);
      if (builtin) {
        copies = builtin.steps.map((s) => ({
          step_number: s.step_number,
          step_name: s.step_name,
          step_description: s.step_description,
          step_icon: s.step_icon,
          ...starterPrompts(s, builtin.steps),
          output_format: s.output_format,
          timeout_seconds: s.timeout_seconds,
          include_additional_context: s.include_additional_context,
          include_additional_instruction: s.include_additional_instruction,
          include_requirements: s.include_requirements,
          include_research: s.include_research,
          include_outline: s.include_outline,
          json_schema: s.json_schema === null ? null : structuredClone(s.json_schema as Record<string, unknown>),
        }));
      }
    }
    if (!copies && !errors.source_article_type) {
      errors.source_article_type = [`The source article type "${sourceType}" is neither a custom workflow of this project nor a built-in type.`];
    }
    if (copies) checkCopiedSteps(errors, "source_article_type", caps, sourceType, copies);
    if (!errors.new_article_type) {
      const [taken] = await tx
        .select({ id: workflows.id })
        .from(workflows)
        .where(and(eq(workflows.projectId, projectId), eq(workflows.slug, newType)));
      if (taken) errors.new_article_type = [`The new article type "${newType}" already exists in this project.`];
    }
    throwIfAny(errors);

    await assertRoomForWorkflow(tx, projectId, newType, caps, "new_article_type");
    const { workflow, created } = await lockOrCreateWorkflow(tx, projectId, newType, custom?.description ?? null);
    // Created by a concurrent request since the check above.
    if (!created) throw invalidFields({ new_article_type: [`The new article type "${newType}" already exists in this project.`] });
    await tx.insert(workflowSteps).values(copies!.map((fields) => ({ ...columnsOf(fields), workflowId: workflow.id, projectId })));
    // A custom source's opt-in is copied; a copy of a built-in starts without (its prompts are starters).
    return (await commitRevision(tx, workflow.id, custom?.briefRepairs ?? false))!;
  });
}
