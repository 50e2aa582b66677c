// The run ledger: one row per article run and a checkpoint per finished step or finishing task.
// A checkpoint is written before the run moves on, so whatever happens afterwards (a retried
// job, a killed worker) the model is never called or billed twice for the same work.
import { and, asc, eq, sql } from "drizzle-orm";
import { notFound } from "../../../kit/src/errors.ts";
import type { Db } from "../db/client.ts";
import { preparedPerDatabase } from "../../../kit/src/prepared-statements.ts";
import { articleImages, finishingCheckpoints, researchCheckpoints, runs, stepAttempts, stepCheckpoints } from "../db/schema.ts";
import { repeatedStepStart } from "./step-attempts.ts";
import { formatUsd, parseUsd, sumUsd, type Picodollars } from "../../../kit/src/rules/usd.ts";
import type { CallAccount } from "./call-account.ts";

export type RunRow = typeof runs.$inferSelect;

export interface StepCheckpoint extends CallAccount {
  stepNumber: number;
  stepName: string;
  batched: boolean;
  output: string;
  completedAt: Date;
}

export interface FinishingCheckpoint {
  task: string;
  model: string;
  promptTokens: number;
  completionTokens: number;
  cost: Picodollars;
  output: string;
  /** Milliseconds the task's model call waited for its provider, as for a step. */
  waitedMs: number;
}

/** An image's checkpoint: its bytes are in the image store named by `storage`. */
export type StoredImage = Omit<typeof articleImages.$inferSelect, "externalId" | "createdAt">;

export interface OmittedImage {
  position: number;
  reason: string;
}

/** A step about to start: its start is recorded with the write before it (see step-attempts.ts). */
export interface StepStart {
  stepNumber: number;
  stepName: string;
}

export interface RunPin {
  externalId: string;
  workflowId: number;
  workflowRevision: number;
  articleType: string;
  requestedModel: string;
}

const stepCheckpointValues = {
  externalId: sql.placeholder("externalId"),
  stepNumber: sql.placeholder("stepNumber"),
  stepName: sql.placeholder("stepName"),
  model: sql.placeholder("model"),
  usedFallback: sql.placeholder("usedFallback"),
  batched: sql.placeholder("batched"),
  promptTokens: sql.placeholder("promptTokens"),
  completionTokens: sql.placeholder("completionTokens"),
  cost: sql.placeholder("cost"),
  output: sql.placeholder("output"),
  waitedMs: sql.placeholder("waitedMs"),
};

// What every run and every step writes or reads, prepared once (see kit/src/prepared-statements.ts).
const statements = preparedPerDatabase((db: Db) => ({
  // The run's pickup and, when it opens the run (its first pickup, so pickups is 1), its first
  // step's start: one statement.
  pickUpRun: (() => {
    const run = db.$with("run").as(
      db
        .insert(runs)
        .values({
          externalId: sql.placeholder("externalId"),
          workflowId: sql.placeholder("workflowId"),
          workflowRevision: sql.placeholder("workflowRevision"),
          articleType: sql.placeholder("articleType"),
          requestedModel: sql.placeholder("requestedModel"),
        })
        .onConflictDoUpdate({ target: runs.externalId, set: { pickups: sql`${runs.pickups} + 1`, updatedAt: sql`now()` } })
        .returning(),
    );
    const firstStepStarted = db.$with("first_step_started").as(
      db
        .insert(stepAttempts)
        .select(
          db
            .select({
              externalId: run.externalId,
              stepNumber: sql<number>`${sql.placeholder("stepNumber")}::integer`.as("step_number"),
              stepName: sql<string>`${sql.placeholder("stepName")}::text`.as("step_name"),
              attempts: sql<number>`1`.as("attempts"),
              firstStartedAt: sql<Date>`now()`.as("first_started_at"),
              lastStartedAt: sql<Date>`now()`.as("last_started_at"),
            })
            .from(run)
            .where(sql`${run.pickups} = 1`),
        )
        .onConflictDoUpdate(repeatedStepStart)
        .returning({ stepNumber: stepAttempts.stepNumber }),
    );
    return db.with(run, firstStepStarted).select().from(run).prepare("runner_pick_up_run");
  })(),
  findRun: db.select().from(runs).where(eq(runs.externalId, sql.placeholder("externalId"))).prepare("runner_find_run"),
  finishRun: db
    .update(runs)
    .set({
      finishedAt: sql`now()`,
      lastError: null,
      webhookEnqueuedAt: sql`case when ${sql.placeholder("webhookEnqueued")}::boolean then now() else ${runs.webhookEnqueuedAt} end`,
      updatedAt: sql`now()`,
    })
    .where(eq(runs.externalId, sql.placeholder("externalId")))
    .prepare("runner_finish_run"),
  stepCheckpointsOf: db.select().from(stepCheckpoints).where(eq(stepCheckpoints.externalId, sql.placeholder("externalId"))).orderBy(asc(stepCheckpoints.stepNumber)).prepare("runner_step_checkpoints_of"),
  saveStepCheckpoint: db
    .insert(stepCheckpoints)
    .values(stepCheckpointValues)
    .onConflictDoNothing()
    // The stored row is what was sent; only its time comes back.
    .returning({ completedAt: stepCheckpoints.completedAt })
    .prepare("runner_save_step_checkpoint"),
  // A step's checkpoint and the next step's start: one statement.
  saveStepCheckpointStartingNext: (() => {
    const nextStepStarted = db.$with("next_step_started").as(
      db
        .insert(stepAttempts)
        .values({
          externalId: sql.placeholder("externalId"),
          stepNumber: sql.placeholder("nextStepNumber"),
          stepName: sql.placeholder("nextStepName"),
          attempts: 1,
          firstStartedAt: sql`now()`,
          lastStartedAt: sql`now()`,
        })
        .onConflictDoUpdate(repeatedStepStart)
        .returning({ stepNumber: stepAttempts.stepNumber }),
    );
    return db
      .with(nextStepStarted)
      .insert(stepCheckpoints)
      .values(stepCheckpointValues)
      .onConflictDoNothing()
      .returning({ completedAt: stepCheckpoints.completedAt })
      .prepare("runner_save_step_checkpoint_starting_next");
  })(),
  storedStepCheckpoint: db
    .select()
    .from(stepCheckpoints)
    .where(and(eq(stepCheckpoints.externalId, sql.placeholder("externalId")), eq(stepCheckpoints.stepNumber, sql.placeholder("stepNumber"))))
    .prepare("runner_stored_step_checkpoint"),
  runCosts: db
    .select({ cost: stepCheckpoints.cost })
    .from(stepCheckpoints)
    .where(eq(stepCheckpoints.externalId, sql.placeholder("externalId")))
    .unionAll(db.select({ cost: finishingCheckpoints.cost }).from(finishingCheckpoints).where(eq(finishingCheckpoints.externalId, sql.placeholder("externalId"))))
    .prepare("runner_run_costs"),
}));

/**
 * Opens the run on first pickup, with the start of its first step; every later pickup (retry,
 * restarted worker) is counted, and records the start of the step it resumes at itself.
 */
export async function pickUpRun(db: Db, pin: RunPin, firstStep: StepStart): Promise<RunRow> {
  const [row] = await statements(db).pickUpRun.execute({ ...pin, stepNumber: firstStep.stepNumber, stepName: firstStep.stepName });
  return row!;
}

/** The pickup that returned this row opened the run: no earlier pickup stored any work. */
export const openedNow = (run: RunRow) => run.pickups === 1;

export async function findRun(db: Db, externalId: string): Promise<RunRow | undefined> {
  const [row] = await statements(db).findRun.execute({ externalId });
  return row;
}

export async function updateRun(db: Db, externalId: string, changes: Partial<Pick<RunRow, "lastError" | "batchId" | "batchPolls" | "humanizedVersionId" | "webhookEnqueuedAt" | "finishedAt" | "omittedImages">>) {
  await db.update(runs).set({ ...changes, updatedAt: new Date() }).where(eq(runs.externalId, externalId));
}

/** The run completed with its hand-offs done; `webhookEnqueued` records the webhook's enqueue in the same write. */
export async function finishRun(db: Db, externalId: string, webhookEnqueued: boolean): Promise<void> {
  await statements(db).finishRun.execute({ externalId, webhookEnqueued });
}

const toStep = (r: typeof stepCheckpoints.$inferSelect): StepCheckpoint => ({ ...r, cost: parseUsd(r.cost) });

export async function stepCheckpointsOf(db: Db, externalId: string): Promise<Map<number, StepCheckpoint>> {
  const rows = await statements(db).stepCheckpointsOf.execute({ externalId });
  return new Map(rows.map((r) => [r.stepNumber, toStep(r)]));
}

/**
 * Stores a step's result, with the start of the step that follows it when there is one; when a
 * result is already stored (a second worker raced), that one wins.
 */
export async function saveStepCheckpoint(db: Db, externalId: string, cp: Omit<StepCheckpoint, "completedAt">, next?: StepStart): Promise<StepCheckpoint> {
  const { saveStepCheckpoint: save, saveStepCheckpointStartingNext: saveStartingNext, storedStepCheckpoint: stored } = statements(db);
  const values = { ...cp, externalId, cost: formatUsd(cp.cost), waitedMs: Math.round(cp.waitedMs) };
  const [inserted] = next ? await saveStartingNext.execute({ ...values, nextStepNumber: next.stepNumber, nextStepName: next.stepName }) : await save.execute(values);
  if (inserted) return { ...cp, waitedMs: values.waitedMs, completedAt: inserted.completedAt };
  const [row] = await stored.execute({ externalId, stepNumber: cp.stepNumber });
  return toStep(row!);
}

export async function finishingCheckpointOf(db: Db, externalId: string, task: string): Promise<FinishingCheckpoint | undefined> {
  const [row] = await db.select().from(finishingCheckpoints).where(and(eq(finishingCheckpoints.externalId, externalId), eq(finishingCheckpoints.task, task)));
  return row ? { ...row, cost: parseUsd(row.cost) } : undefined;
}

export async function saveFinishingCheckpoint(db: Db, externalId: string, cp: FinishingCheckpoint): Promise<FinishingCheckpoint> {
  await db.insert(finishingCheckpoints).values({ ...cp, externalId, cost: formatUsd(cp.cost), waitedMs: Math.round(cp.waitedMs) }).onConflictDoNothing();
  return (await finishingCheckpointOf(db, externalId, cp.task))!;
}

export async function imagesOf(db: Db, externalId: string): Promise<StoredImage[]> {
  return db.select().from(articleImages).where(eq(articleImages.externalId, externalId)).orderBy(asc(articleImages.position));
}

/** Stores an image's checkpoint; when one is already stored for its position (a second worker raced), that one wins. */
export async function saveImage(db: Db, externalId: string, image: StoredImage): Promise<StoredImage> {
  const [inserted] = await db.insert(articleImages).values({ ...image, externalId }).onConflictDoNothing().returning();
  if (inserted) return inserted;
  const [row] = await db.select().from(articleImages).where(and(eq(articleImages.externalId, externalId), eq(articleImages.position, image.position)));
  return row!;
}

/** An image by its public id. */
export async function imageById(db: Db, imageId: string): Promise<StoredImage | undefined> {
  const [row] = await db.select().from(articleImages).where(eq(articleImages.imageId, imageId));
  return row;
}

export interface StoredResearch {
  query: string;
  /** siteName is absent in research checkpointed before sources were shown. */
  sources: { index: number; title: string; url: string; siteName?: string; text: string; wordCount: number; fetchedAt: string }[];
  questions: string[];
}

export async function researchOf(db: Db, externalId: string): Promise<StoredResearch | undefined> {
  const [row] = await db.select().from(researchCheckpoints).where(eq(researchCheckpoints.externalId, externalId));
  return row ? { query: row.query, sources: row.sources as StoredResearch["sources"], questions: row.questions as string[] } : undefined;
}

export async function saveResearch(db: Db, externalId: string, research: StoredResearch): Promise<StoredResearch> {
  await db.insert(researchCheckpoints).values({ externalId, ...research }).onConflictDoNothing();
  return (await researchOf(db, externalId))!;
}

/** The run's total cost: every checkpoint counted once, however often the job ran. */
export async function runCost(db: Db, externalId: string): Promise<Picodollars> {
  const rows = await statements(db).runCosts.execute({ externalId });
  return sumUsd(rows.map((r) => parseUsd(r.cost)));
}

export async function getRunRecord(db: Db, externalId: string) {
  const run = await findRun(db, externalId);
  if (!run) throw notFound(`no run for article ${externalId}`);
  return {
    run,
    steps: [...(await stepCheckpointsOf(db, externalId)).values()],
    images: await imagesOf(db, externalId),
    cost: await runCost(db, externalId),
  };
}
