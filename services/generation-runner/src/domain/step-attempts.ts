// Step starts: each time a run starts a step (its first run, a retry of the job, a worker that
// resumed after another died), the step's attempt count goes up. Kept apart from the checkpoint,
// which is written only once the step has produced its output.
import { sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { stepAttempts } from "../db/schema.ts";

export async function recordStepStart(db: Db, externalId: string, step: { stepNumber: number; stepName: string }, at = new Date()): Promise<void> {
  await db
    .insert(stepAttempts)
    .values({ externalId, stepNumber: step.stepNumber, stepName: step.stepName, attempts: 1, firstStartedAt: at, lastStartedAt: at })
    .onConflictDoUpdate({
      target: [stepAttempts.externalId, stepAttempts.stepNumber],
      set: { attempts: sql`${stepAttempts.attempts} + 1`, lastStartedAt: at },
    });
}
