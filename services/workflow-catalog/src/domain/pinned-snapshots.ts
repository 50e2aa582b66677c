// Pinned snapshots: which revision an article created now runs on, and the exact steps of any
// revision later (spec 2.3 rule 4). Built-ins come from code at their current revision and from
// the recorded builtin_snapshots for older ones; custom workflows from workflow_snapshots.
import { and, eq, sql } from "drizzle-orm";
import { notFound } from "../../../kit/src/errors.ts";
import { preparedPerDatabase } from "../../../kit/src/prepared-statements.ts";
import type { Db } from "../db/client.ts";
import { builtinSnapshots, workflows, workflowSnapshots, type SnapshotStepRecord } from "../db/schema.ts";
import { BUILTIN_ARTICLE_TYPES, builtinWorkflow, type BuiltinWorkflow } from "./builtin-workflows/index.ts";

export interface PinnedWorkflow {
  /** 0 for a built-in. */
  workflowId: number;
  revision: number;
  articleType: string;
  builtin: boolean;
  stepCount: number;
  hasResearchStep: boolean;
  /** Length control and brief repairs after the last step: always for a built-in, opted into by a custom workflow. */
  briefRepairs: boolean;
}

export interface Snapshot {
  workflow: PinnedWorkflow;
  steps: SnapshotStepRecord[];
}

function pinned(workflowId: number, revision: number, articleType: string, steps: readonly { include_research: boolean }[], briefRepairs = workflowId === 0): PinnedWorkflow {
  return {
    workflowId,
    revision,
    articleType,
    builtin: workflowId === 0,
    stepCount: steps.length,
    hasResearchStep: steps.some((step) => step.include_research),
    briefRepairs,
  };
}

function builtinSteps(workflow: BuiltinWorkflow): SnapshotStepRecord[] {
  return workflow.steps.map((s) => ({
    step_number: s.step_number,
    step_name: s.step_name,
    system: s.system,
    user: s.user,
    output_format: s.output_format,
    timeout_seconds: s.timeout_seconds,
    include_additional_context: s.include_additional_context,
    include_additional_instruction: s.include_additional_instruction,
    include_requirements: s.include_requirements,
    include_research: s.include_research,
    include_outline: s.include_outline,
    json_schema: s.json_schema,
    role: s.role,
  }));
}

// Asked once for every article created: built once (kit/src/prepared-statements.ts), so a call
// only binds its values. Postgres counts the steps and looks for a research step itself, so the
// snapshot's step list (prompts included) never travels or gets parsed here.
const lookups = preparedPerDatabase((db: Db) => ({
  currentCustom: db
    .select({
      workflowId: workflowSnapshots.workflowId,
      revision: workflowSnapshots.revision,
      articleType: workflowSnapshots.articleType,
      stepCount: sql<number>`jsonb_array_length(${workflowSnapshots.steps})::int4`,
      hasResearchStep: sql<boolean>`${workflowSnapshots.steps} @> '[{"include_research": true}]'::jsonb`,
      briefRepairs: workflowSnapshots.briefRepairs,
    })
    .from(workflows)
    .innerJoin(workflowSnapshots, and(eq(workflowSnapshots.workflowId, workflows.id), eq(workflowSnapshots.revision, workflows.revision)))
    .where(and(eq(workflows.projectId, sql.placeholder("projectId")), eq(workflows.slug, sql.placeholder("articleType"))))
    .prepare("catalog_current_custom_workflow"),
}));

/** The project's custom type when it has one, else the built-in of that name. */
export async function resolveArticleType(db: Db, projectId: number, articleType: string): Promise<PinnedWorkflow> {
  const [custom] = await lookups(db).currentCustom.execute({ projectId, articleType });
  if (custom) return { ...custom, builtin: false };
  const builtin = builtinWorkflow(articleType);
  if (builtin) return pinned(0, builtin.revision, builtin.article_type, builtin.steps);
  throw notFound(`The article type "${articleType}" is neither a built-in type nor a custom workflow of this project.`);
}

/** The steps of one revision; a built-in is named by article_type with workflow_id 0. */
export async function getSnapshot(db: Db, workflowId: number, revision: number, articleType: string): Promise<Snapshot> {
  if (workflowId === 0) {
    const builtin = builtinWorkflow(articleType);
    if (!builtin) throw notFound(`No built-in workflow "${articleType}".`);
    if (revision === 0 || revision === builtin.revision) {
      const steps = builtinSteps(builtin);
      return { workflow: pinned(0, builtin.revision, builtin.article_type, steps), steps };
    }
    const [recorded] = await db
      .select()
      .from(builtinSnapshots)
      .where(and(eq(builtinSnapshots.articleType, articleType), eq(builtinSnapshots.revision, revision)));
    if (!recorded) throw notFound(`No revision ${revision} of the built-in workflow "${articleType}".`);
    return { workflow: pinned(0, revision, articleType, recorded.steps), steps: recorded.steps };
  }
  const [snapshot] = await db
    .select()
    .from(workflowSnapshots)
    .where(and(eq(workflowSnapshots.workflowId, workflowId), eq(workflowSnapshots.revision, revision)));
  if (!snapshot) throw notFound(`No revision ${revision} of workflow ${workflowId}.`);
  return { workflow: pinned(snapshot.workflowId, snapshot.revision, snapshot.articleType, snapshot.steps, snapshot.briefRepairs), steps: snapshot.steps };
}

/**
 * Records the current revision of every built-in at start. The code is the truth for its own
 * revision, so a row of the same revision is overwritten; older revisions stay as they were.
 */
export async function recordBuiltinSnapshots(db: Db): Promise<void> {
  for (const type of BUILTIN_ARTICLE_TYPES) {
    const builtin = builtinWorkflow(type)!;
    const steps = builtinSteps(builtin);
    await db
      .insert(builtinSnapshots)
      .values({ articleType: type, revision: builtin.revision, steps })
      .onConflictDoUpdate({ target: [builtinSnapshots.articleType, builtinSnapshots.revision], set: { steps } });
  }
}
