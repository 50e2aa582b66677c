// Revisions of custom workflows: every change runs in one transaction that holds the workflow's
// row lock, bumps its revision and records the revision's step list as an immutable snapshot.
import { and, asc, eq, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { workflows, workflowSnapshots, workflowSteps, type SnapshotStepRecord } from "../db/schema.ts";

export type WorkflowRow = typeof workflows.$inferSelect;
export type StepRow = typeof workflowSteps.$inferSelect;

/** Thrown inside a change to start it over, e.g. when a step moved before its workflow was locked. */
export class RetryChange extends Error {}

// Deadlocks can happen when two changes lock the same two workflows in different orders (moves,
// reorders across workflows); Postgres aborts one of them and it simply runs again.
const RETRYABLE_SQLSTATES = new Set(["40P01", "40001"]);
const MAX_ATTEMPTS = 8;

/** Runs a change in a transaction, starting it over on deadlock or RetryChange. */
export async function inChange<T>(db: Db, change: (tx: Db) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction((tx) => change(tx as unknown as Db));
    } catch (error) {
      const retryable = error instanceof RetryChange || RETRYABLE_SQLSTATES.has(sqlState(error) ?? "");
      if (!retryable || attempt >= MAX_ATTEMPTS) throw error;
      await Bun.sleep(Math.random() * 10 * attempt);
    }
  }
}

/** The SQLSTATE of a database error, also when drizzle wrapped it. */
export function sqlState(error: unknown): string | undefined {
  const e = error as { code?: unknown; cause?: { code?: unknown } };
  if (typeof e?.code === "string") return e.code;
  if (typeof e?.cause?.code === "string") return e.cause.code;
  return undefined;
}

/** The constraint a unique violation hit, also when drizzle wrapped it. */
export function violatedConstraint(error: unknown): string | undefined {
  const e = error as { constraint_name?: unknown; cause?: { constraint_name?: unknown } };
  const name = e?.constraint_name ?? e?.cause?.constraint_name;
  return typeof name === "string" ? name : undefined;
}

/** A human name for a new workflow: "product_faq" → "Product faq". */
export function workflowNameOf(slug: string): string {
  const words = slug.replace(/[_-]+/g, " ").trim();
  return words ? words[0].toUpperCase() + words.slice(1) : slug;
}

/** Locks one workflow row of the project by id; null when it no longer exists. */
export async function lockWorkflowById(tx: Db, workflowId: number): Promise<WorkflowRow | null> {
  const [row] = await tx.select().from(workflows).where(eq(workflows.id, workflowId)).for("update");
  return row ?? null;
}

/** Locks the project's workflow of this type; null when there is none. */
export async function lockWorkflowBySlug(tx: Db, projectId: number, slug: string): Promise<WorkflowRow | null> {
  const [row] = await tx.select().from(workflows).where(and(eq(workflows.projectId, projectId), eq(workflows.slug, slug))).for("update");
  return row ?? null;
}

/**
 * Locks the project's workflow of this type, creating it (at revision 0, bumped to 1 by the change
 * that gives it its first step) when absent. Two first steps of a new type racing each other end
 * up in one workflow: the unique (project_id, slug) makes the second insert wait and then use it.
 */
export async function lockOrCreateWorkflow(tx: Db, projectId: number, slug: string, description: string | null = null): Promise<{ workflow: WorkflowRow; created: boolean }> {
  for (;;) {
    const [inserted] = await tx
      .insert(workflows)
      .values({ projectId, slug, name: workflowNameOf(slug), description, revision: 0 })
      .onConflictDoNothing({ target: [workflows.projectId, workflows.slug] })
      .returning();
    if (inserted) return { workflow: inserted, created: true };
    // It exists, or existed: a concurrent change may have deleted it since; then insert again.
    const existing = await lockWorkflowBySlug(tx, projectId, slug);
    if (existing) return { workflow: existing, created: false };
  }
}

export async function stepsOf(tx: Db, workflowId: number): Promise<StepRow[]> {
  return tx.select().from(workflowSteps).where(eq(workflowSteps.workflowId, workflowId)).orderBy(asc(workflowSteps.stepNumber));
}

export function snapshotStep(step: StepRow): SnapshotStepRecord {
  return {
    step_number: step.stepNumber,
    step_name: step.stepName,
    system: step.system,
    user: step.user,
    output_format: step.outputFormat,
    timeout_seconds: step.timeoutSeconds,
    include_additional_context: step.includeAdditionalContext,
    include_additional_instruction: step.includeAdditionalInstruction,
    include_requirements: step.includeRequirements,
    include_research: step.includeResearch,
    include_outline: step.includeOutline,
    json_schema: step.jsonSchema ?? null,
    role: "",
  };
}

/**
 * Closes a change to a locked workflow: one revision up (with its brief_repairs set, when the change
 * sets it) and the new revision's snapshot. A workflow left without steps is deleted instead (spec
 * 2.3 rule 1); its earlier snapshots stay readable.
 */
export async function commitRevision(tx: Db, workflowId: number, briefRepairs?: boolean): Promise<{ workflow: WorkflowRow; steps: StepRow[] } | null> {
  const steps = await stepsOf(tx, workflowId);
  if (steps.length === 0) {
    await tx.delete(workflows).where(eq(workflows.id, workflowId));
    return null;
  }
  const [workflow] = await tx
    .update(workflows)
    .set({ revision: sql`${workflows.revision} + 1`, updatedAt: new Date(), ...(briefRepairs === undefined ? {} : { briefRepairs }) })
    .where(eq(workflows.id, workflowId))
    .returning();
  await tx.insert(workflowSnapshots).values({
    workflowId,
    revision: workflow.revision,
    projectId: workflow.projectId,
    articleType: workflow.slug,
    steps: steps.map(snapshotStep),
    briefRepairs: workflow.briefRepairs,
  });
  return { workflow, steps };
}
