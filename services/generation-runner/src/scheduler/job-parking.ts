// The one park and the one wake of every line an article waits in. Parking moves the article's
// generation job to delayed, so it holds no worker slot and renews no lock: a call waiting long
// for its budget's turn or through an outage (parking.ts), a batch between polls, a dependency's
// wait, an article over its account's cap (account-shares.ts). Waking promotes it: a budget's turn
// come (the pacer), a place in the account's share given, or a cancel that must end it at once.
import type { Job, Queue } from "bullmq";
import type { GenerationJob } from "../../../kit/src/queues.ts";

/**
 * Parks jobs. A job moved to delayed stays in BullMQ's lock renewal until its processor has
 * returned, so a renewal in between fails, harmlessly: the job is no longer this runner's to hold.
 * Its id is kept for a lock's length to tell that failure from a lost lock.
 */
export class ParkedJobs {
  private readonly movedAway = new Set<string>();

  constructor(private readonly lockDurationMs: number) {}

  /** Moves the job to delayed until `until` (ms since the epoch), or until it is woken. */
  async park(job: Job<GenerationJob>, until: number, token?: string): Promise<void> {
    this.movedAway.add(job.id!);
    setTimeout(() => this.movedAway.delete(job.id!), this.lockDurationMs).unref?.();
    await job.moveToDelayed(until, token);
  }

  /** Whether a failed lock renewal was of a job this runner parked. */
  movedAwayFrom(jobId: string): boolean {
    return this.movedAway.has(jobId);
  }
}

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
