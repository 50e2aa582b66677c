// A job whose worker died too often (more than BullMQ's maxStalledCount) is failed by BullMQ
// without its handler ever running: the stalled-job check marks it and puts it back to wait, and
// the next worker to take it fails it at once and says so with its own "failed" event. So the
// worker that failed it hears it, and no process has to read the queue's whole event stream to
// catch the few that stalled too often.
import type { Job, Worker } from "bullmq";

/** Calls `stalledTooOften` with each job this worker failed because its workers kept dying. */
export function onJobsStalledTooOften<T>(worker: Worker<T>, stalledTooOften: (job: Job<T>) => void): void {
  worker.on("failed", (job) => {
    // Set from the stalled-job check's mark, and only from it on a queue without flows.
    if (job?.deferredFailure) stalledTooOften(job);
  });
}
