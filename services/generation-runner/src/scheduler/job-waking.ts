// Waking a parked (delayed) generation job: the one way the runner ends a park early, whether a
// budget's turn has come (the pacer), a place in the account's share was given (account-shares.ts)
// or a cancel must end the article at once.
import type { Queue } from "bullmq";

/** How often a job still on its way to parking is looked at again. */
const ACTIVE_RECHECK_MS = 250;

/**
 * Promotes the article's job when it is delayed. A job still active may be on its way to parking
 * (the wake raced its park): it is looked at again for up to `activeWaitMs`, so the wake is not
 * lost. Whether the job is alive after this (woken, waiting or running); false once it has ended.
 */
export async function wakeJob(queue: Queue, externalId: string, activeWaitMs = 0): Promise<boolean> {
  const deadline = Date.now() + activeWaitMs;
  for (;;) {
    const job = await queue.getJob(externalId);
    const state = job ? await job.getState() : "unknown";
    if (state === "delayed") {
      await job!.promote();
      return true;
    }
    if (state !== "active" || Date.now() >= deadline) return state === "waiting" || state === "active" || state === "prioritized";
    await Bun.sleep(ACTIVE_RECHECK_MS);
  }
}
