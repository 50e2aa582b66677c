// Step starts: each time a run starts a step (its first run, a retry of the job, a worker that
// resumed after another died), the step's attempt count goes up. Kept apart from the checkpoint,
// which is written only once the step has produced its output. A start goes out with the write
// just before it, so it costs no statement of its own: the run's opening (a new run's first step)
// or the previous step's checkpoint (every later step); only a resumed run's first step records
// its start alone, while its model call runs.
import { sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { preparedPerDatabase } from "../../../kit/src/prepared-statements.ts";
import { stepAttempts } from "../db/schema.ts";

/** How a repeated start of the same step is counted: in the row its first start made. */
export const repeatedStepStart = {
  target: [stepAttempts.externalId, stepAttempts.stepNumber],
  set: { attempts: sql`${stepAttempts.attempts} + 1`, lastStartedAt: sql`excluded.last_started_at` },
};

// The start written alone (a resumed run's first step), prepared once.
const statements = preparedPerDatabase((db: Db) => ({
  recordStepStart: db
    .insert(stepAttempts)
    .values({
      externalId: sql.placeholder("externalId"),
      stepNumber: sql.placeholder("stepNumber"),
      stepName: sql.placeholder("stepName"),
      attempts: 1,
      firstStartedAt: sql.placeholder("at"),
      lastStartedAt: sql.placeholder("at"),
    })
    .onConflictDoUpdate(repeatedStepStart)
    .prepare("runner_record_step_start"),
}));

export async function recordStepStart(db: Db, externalId: string, step: { stepNumber: number; stepName: string }, at = new Date()): Promise<void> {
  await statements(db).recordStepStart.execute({ externalId, stepNumber: step.stepNumber, stepName: step.stepName, at });
}
