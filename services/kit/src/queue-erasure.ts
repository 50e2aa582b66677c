// An erased article's traces in a BullMQ queue: its jobs still waiting (or delayed, parked) are
// removed, and the queue's event stream, which names every job by id, forgets its entries, so no
// Redis key keeps the article's id. A job running now is left: the caller asks again once it ended.
import type { Job, Queue } from "bullmq";
import type { RedisConnection } from "./redis.ts";

export interface ForgottenJobs {
  /** Jobs of the article running now (left alone). */
  running: number;
  removed: number;
}

// Far more than the event stream keeps (queues.ts caps it), read a page at a time.
const EVENTS_PAGE = 1000;

/** Removes the queue's jobs that `isOurs` picks and their event entries; answers what it found running. */
export async function forgetJobs<T>(queue: Queue<T>, client: RedisConnection, isOurs: (job: Job<T>) => boolean, ids: readonly string[]): Promise<ForgottenJobs> {
  let running = 0;
  let removed = 0;
  const jobs = (await queue.getJobs(["waiting", "delayed", "prioritized", "waiting-children", "active"])).filter((j) => j !== undefined && isOurs(j as Job<T>)) as Job<T>[];
  for (const job of jobs) {
    if ((await job.getState()) === "active") running++;
    else {
      await job.remove();
      removed++;
    }
  }
  const wanted = new Set(ids);
  for (let after = "-"; ; ) {
    const page = (await client.xrange(queue.keys.events, after, "+", "COUNT", EVENTS_PAGE)) as [string, string[]][];
    const ours = page.filter(([, fields]) => fields.some((value, i) => i % 2 === 1 && fields[i - 1] === "jobId" && [...wanted].some((id) => value === id || value.startsWith(`${id}.`))));
    if (ours.length > 0) await client.xdel(queue.keys.events, ...ours.map(([id]) => id));
    if (page.length < EVENTS_PAGE) break;
    after = `(${page.at(-1)![0]}`;
  }
  return { running, removed };
}
