// A generation job's controls as a run sees them (domain/pipeline-deps.ts, JobControl): the cancel
// signal, whether this is the last attempt, and how the job lets go of its worker slot, to resume
// later (a batch poll, a dependency's wait) or parked until its turn (scheduler/parking.ts).
import { DelayedError, type Job } from "bullmq";
import type { GenerationJob } from "../../kit/src/queues.ts";
import type { Logger } from "../../kit/src/logger.ts";
import type { JobControl } from "./domain/pipeline.ts";

/** The job's data without the outage a parked article carried. */
export function withoutOutage({ outage: _, ...data }: GenerationJob): GenerationJob {
  return data;
}

/**
 * Moves jobs to delayed. A job moved to delayed stays in BullMQ's lock renewal until its
 * processor has returned, so a renewal in between fails, harmlessly: the job is no longer this
 * runner's to hold. Its id is kept for a lock's length to tell that failure from a lost lock.
 */
export class DelayedJobs {
  private readonly movedAway = new Set<string>();

  constructor(private readonly lockDurationMs: number) {}

  async move(job: Job<GenerationJob>, until: number, token?: string): Promise<void> {
    this.movedAway.add(job.id!);
    setTimeout(() => this.movedAway.delete(job.id!), this.lockDurationMs).unref?.();
    await job.moveToDelayed(until, token);
  }

  /** Whether a failed lock renewal was of a job this runner moved away. */
  movedAwayFrom(jobId: string): boolean {
    return this.movedAway.has(jobId);
  }
}

export function jobControl(job: Job<GenerationJob>, token: string | undefined, delayed: DelayedJobs, signal: AbortSignal, logger: Logger): JobControl {
  const { externalId } = job.data;
  const control: JobControl = {
    signal,
    finalAttempt: job.attemptsMade + 1 >= (job.opts.attempts ?? 1),
    resumedFromPark: job.data.parkedInAttempt === job.attemptsMade,
    async resumeLater(delayMs) {
      await delayed.move(job, Date.now() + delayMs, token);
      throw new DelayedError();
    },
    parking: {
      article: externalId,
      outage: job.data.outage,
      async park(delayMs, outage) {
        // The attempt it parked in: its pickup after the wake goes on with the attempt, not a new one.
        await job.updateData({ ...withoutOutage(job.data), ...(outage ? { outage } : {}), parkedInAttempt: job.attemptsMade });
        logger.debug("article parked", { externalId, outage: outage !== undefined });
        return control.resumeLater(delayMs);
      },
      async outageEnded() {
        await job.updateData(withoutOutage(job.data));
      },
    },
  };
  return control;
}
