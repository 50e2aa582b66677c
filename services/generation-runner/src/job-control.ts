// A generation job's controls as a run sees them (domain/pipeline-deps.ts, JobControl): the cancel
// signal, whether this is the last attempt, and how the job lets go of its worker slot, to resume
// later (a batch poll, a dependency's wait) or parked until its turn (scheduler/parking.ts), both
// through the scheduler's one park (scheduler/job-parking.ts).
import { DelayedError, type Job } from "bullmq";
import type { GenerationJob } from "../../kit/src/queues.ts";
import type { Logger } from "../../kit/src/logger.ts";
import type { JobControl } from "./domain/pipeline.ts";
import type { Scheduler } from "./scheduler/index.ts";

/** The job's data without the outage a parked article carried. */
export function withoutOutage({ outage: _, ...data }: GenerationJob): GenerationJob {
  return data;
}

export function jobControl(job: Job<GenerationJob>, token: string | undefined, scheduler: Pick<Scheduler, "park">, signal: AbortSignal, logger: Logger): JobControl {
  const { externalId } = job.data;
  const control: JobControl = {
    signal,
    finalAttempt: job.attemptsMade + 1 >= (job.opts.attempts ?? 1),
    resumedFromPark: job.data.parkedInAttempt === job.attemptsMade,
    async resumeLater(delayMs) {
      await scheduler.park(job, Date.now() + delayMs, token);
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
