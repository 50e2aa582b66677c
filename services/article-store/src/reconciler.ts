// The reconciler: a periodic sweep that hands every article whose queue job was lost (a Redis that
// came back empty, a failover to a lagging replica, an eviction) back to its worker. The outbox
// covers the moment of creation; this covers the rest of an article's life.
//
// One replica sweeps at a time (a leader key with expiry under REDIS_PREFIX, kept while it sweeps
// and taken over by another replica when it stops), and every action is safe to repeat anyway:
// a job is added with the article's external_id as its id, so BullMQ ignores a second add, and
// only a finished job is removed first (BullMQ refuses to remove one a worker holds).
//
// A job that is waiting, delayed (a retry backoff, a batch between polls) or active is live and
// left alone, so nothing here starts a second run beside one that is under way. A run whose job
// vanished while it was in flight keeps its article changing (the runner repeats its progress
// report within a quarter of RECONCILE_STALE_AFTER_MS), so it is never taken for a stranded one.
import { randomUUID } from "node:crypto";
import type { Job, Queue } from "bullmq";
import type IORedis from "ioredis";
import type { ReconcileSettings } from "../../kit/src/config.ts";
import type { Logger } from "../../kit/src/logger.ts";
import type { GenerationJob, WebhookJob } from "../../kit/src/queues.ts";
import { redisKey } from "../../kit/src/redis.ts";
import { redisScript } from "../../kit/src/redis-scripts.ts";
import type { Db } from "./db/client.ts";
import { owedJob, unfinishedArticlesAfter, type OwedJob, type UnfinishedArticle } from "./domain/unfinished-work.ts";

export interface ReconcilerOptions {
  db: Db;
  redis: IORedis;
  redisPrefix: string;
  generationQueue: Queue<GenerationJob>;
  webhookQueue: Queue<WebhookJob>;
  logger: Logger;
  settings: ReconcileSettings;
  /** Articles read per batch, and batches per sweep; a longer walk goes on at the next sweep. */
  batchSize?: number;
  batchesPerSweep?: number;
}

export interface SweepSummary {
  examined: number;
  takenUp: number;
}

export interface Reconciler {
  /** One sweep now (when this replica leads); what it examined and took up. */
  sweep(): Promise<SweepSummary>;
  stop(): Promise<void>;
}

// Bounded, so an unreachable Redis fails a sweep (logged, tried at the next) instead of holding it and shutdown.
const REDIS_TIMEOUT_MS = 10_000;

// Takes or keeps the leader key: free, or already this replica's.
const leadScript = redisScript(`
local current = redis.call("GET", KEYS[1])
if current == false or current == ARGV[1] then
  redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
  return 1
end
return 0`);

// Gives the leader key up if this replica holds it, so another one leads at its next sweep.
const stepDownScript = redisScript(`
if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end
return 0`);

type JobState = "missing" | "live" | "completed" | "failed";

async function stateOf(job: Job | undefined): Promise<JobState> {
  if (!job) return "missing";
  // BullMQ sets finishedOn when a job lands in the completed or failed set, and clears it on a retry.
  if (!job.finishedOn) return "live";
  return (await job.isFailed()) ? "failed" : "completed";
}

async function bounded<T>(work: Promise<T>, what: string, ms = REDIS_TIMEOUT_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

export function startReconciler(opts: ReconcilerOptions): Reconciler {
  const { db, redis, generationQueue, webhookQueue, logger, settings } = opts;
  const batchSize = opts.batchSize ?? 200;
  const batchesPerSweep = opts.batchesPerSweep ?? 25;
  const leaderKey = redisKey(opts.redisPrefix, "reconciler", "leader");
  const token = randomUUID();
  // Held for two intervals: the leader renews it each sweep; another replica takes over after it stops.
  const leaseMs = String(2 * settings.intervalMs);
  // Where the walk goes on when the last sweep stopped at its batch limit (0: from the start).
  let cursor = 0;
  let stopped = false;

  const takeLead = async () => (await bounded(leadScript.run(redis, [leaderKey], [token, leaseMs]), "taking the reconciler's lead")) === 1;

  /** Re-enqueues the job under the article's external_id, removing a finished one first. */
  async function enqueueAgain<T>(queue: Queue<T>, name: string, data: T, externalId: string, state: JobState): Promise<boolean> {
    // 0 when a worker holds it: then it is live after all.
    if (state !== "missing" && (await queue.remove(externalId)) === 0) return false;
    await (queue as Queue).add(name, data, { jobId: externalId });
    return true;
  }

  async function takeUp(article: UnfinishedArticle, owed: OwedJob): Promise<boolean> {
    const { externalId, status } = article;
    // Whichever job is owed, a live generation job still has the article (its run hands off the webhook itself).
    const generation = await stateOf(await generationQueue.getJob(externalId));
    if (generation === "live") return false;
    if (owed.queue === "generation") {
      if (generation !== "missing" && !owed.finishedIsLost) return false;
      if (!(await enqueueAgain(generationQueue, "generate", { externalId }, externalId, generation))) return false;
      logger.warn("article taken up again: no live generation job", { externalId, status, job: generation, action: "re-enqueued its generation job" });
      return true;
    }
    const webhook = await stateOf(await webhookQueue.getJob(externalId));
    if (webhook === "live") return false;
    if (!(await enqueueAgain(webhookQueue, "deliver", { externalId, versionId: owed.versionId }, externalId, webhook))) return false;
    logger.warn("completion webhook handed to the dispatcher again: no delivery on record and no live webhook job", {
      externalId,
      status,
      versionId: owed.versionId,
      job: webhook,
      action: "re-enqueued its webhook job",
    });
    return true;
  }

  async function sweep(): Promise<SweepSummary> {
    const summary = { examined: 0, takenUp: 0 };
    if (!(await takeLead())) return summary;
    for (let batch = 0; batch < batchesPerSweep && !stopped; batch++) {
      if (batch > 0 && !(await takeLead())) break;
      const articles = await unfinishedArticlesAfter(db, cursor, batchSize, settings.staleAfterMs);
      summary.examined += articles.length;
      cursor = articles.length === batchSize ? articles[articles.length - 1]!.id : 0;
      const owed = articles.flatMap((article) => {
        const job = owedJob(article);
        return job ? [{ article, job }] : [];
      });
      const outcomes = await bounded(
        Promise.all(
          owed.map(({ article, job }) =>
            takeUp(article, job).catch((error) => {
              logger.error("could not take an article up again", { externalId: article.externalId, status: article.status, error: (error as Error).message });
              return false;
            }),
          ),
        ),
        "checking the articles' jobs",
      );
      summary.takenUp += outcomes.filter(Boolean).length;
      if (cursor === 0) break;
    }
    if (summary.takenUp > 0) logger.info("reconcile sweep", summary);
    return summary;
  }

  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<unknown> | undefined;
  const schedule = () => {
    timer = setTimeout(async () => {
      running = sweep().catch((error) => logger.error("reconcile sweep failed", { error: (error as Error).message }));
      await running;
      running = undefined;
      if (!stopped) schedule();
    }, settings.intervalMs);
  };
  schedule();
  logger.info("reconciler started", { intervalMs: settings.intervalMs, staleAfterMs: settings.staleAfterMs });

  return {
    sweep,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
      await bounded(stepDownScript.run(redis, [leaderKey], [token]), "giving up the reconciler's lead", 1000).catch(() => {});
    },
  };
}
