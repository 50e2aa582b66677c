// The reconciler: a periodic sweep that hands every article whose queue job was lost (a Redis that
// came back empty, a failover to a lagging replica, an eviction) back to its worker. The outbox
// covers the moment of creation; this covers the rest of an article's life.
//
// One replica sweeps at a time (a leader key with expiry under REDIS_PREFIX, kept while it sweeps
// and taken over by another replica when it stops), and every action is safe to repeat anyway:
// a job is added with the article's external_id as its id, so BullMQ ignores a second add, and
// only a finished job is removed first (BullMQ refuses to remove one a worker holds).
//
// A job that is waiting, delayed (in its account's line for a worker slot, a retry backoff, a batch
// between polls) or active is live and left alone, so nothing here starts a second run beside one
// that is under way. A run whose job vanished while it was in flight keeps its article changing
// (the runner repeats its progress report within a quarter of RECONCILE_STALE_AFTER_MS), so it is
// never taken for a stranded one.
// An article taken up again and again (its new job ends with nothing it can change, so it stays
// owed) waits twice as long each time, up to an hour: no article is re-enqueued at every sweep.
//
// Each sweep also gives back the words of creations that died half-way: the gateway reserves an
// article's words in accounts-billing (reference: the article's external_id) and then creates the
// article here, so a gateway killed between the two leaves words held with no article to settle or
// release them. The sweep asks accounts-billing for reservations held longer than
// RECONCILE_STALE_AFTER_MS (QuotaService.ListHeldReservations, a page at a time, its own cursor
// kept like the article walk's) and releases those whose external_id has no article here;
// ReleaseWords is idempotent and leaves a settled reservation as it is. A reservation whose article
// exists is left alone: its run settles or releases it. A creation still between its two calls
// after that long (its calls have deadlines of seconds) would find its words released; if its
// article is created after all, completion settles the words generated anyway (SettleWords counts
// a released reservation). This is the one place such words come back: the gateway tries a single
// immediate release when a creation fails, and keeps no retries in its own memory.
import { randomUUID } from "node:crypto";
import type { Client } from "@connectrpc/connect";
import type { Job, Queue } from "bullmq";
import type { ReconcileSettings } from "../../kit/src/config.ts";
import type { Logger } from "../../kit/src/logger.ts";
import type { FairDispatch } from "../../kit/src/fair-dispatch.ts";
import type { GenerationJob, WebhookJob } from "../../kit/src/queues.ts";
import { redisKey, type RedisConnection } from "../../kit/src/redis.ts";
import { redisScript } from "../../kit/src/redis-scripts.ts";
import { ReservationState, type QuotaService } from "../../../proto/gen/articles/accounts_billing/v1/quota_pb.ts";
import type { Db } from "./db/client.ts";
import { referencesWithoutArticle } from "./domain/held-reservations.ts";
import { articlesWithStaleRevisions, owedJob, unfinishedArticlesAfter, type OwedJob, type TakenUpArticle } from "./domain/unfinished-work.ts";
import { within } from "../../kit/src/deadline.ts";

export interface ReconcilerOptions {
  db: Db;
  redis: RedisConnection;
  redisPrefix: string;
  generationQueue: Queue<GenerationJob>;
  /** The accounts' lines a generation job taken up again joins (as a new article's does). */
  dispatch: FairDispatch;
  webhookQueue: Queue<WebhookJob>;
  /** accounts-billing's word ledger: held reservations listed, orphaned ones released. */
  quota: Client<typeof QuotaService>;
  logger: Logger;
  settings: ReconcileSettings;
  /** Articles read per batch, and batches per sweep; a longer walk goes on at the next sweep. */
  batchSize?: number;
  batchesPerSweep?: number;
  /** Held reservations read per page, and pages per sweep; a longer walk goes on at the next sweep. */
  reservationPageSize?: number;
  reservationPagesPerSweep?: number;
}

export interface SweepSummary {
  examined: number;
  takenUp: number;
  /** Reservations released because no article was created for them. */
  reservationsReleased: number;
}

export interface Reconciler {
  /** One sweep now (when this replica leads); what it examined and took up. */
  sweep(): Promise<SweepSummary>;
  stop(): Promise<void>;
}

// Bounded, so an unreachable Redis fails a sweep (logged, tried at the next) instead of holding it and shutdown.
const REDIS_TIMEOUT_MS = 10_000;
/** The longest an article taken up again and again waits before the next time. */
const TAKE_UP_BACKOFF_MAX_MS = 3_600_000;
/** How long an article's take-ups are remembered (a few bytes an article, for the articles taken up only). */
const TAKE_UP_MEMORY_MS = 86_400_000;

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

function bounded<T>(work: Promise<T>, what: string, ms = REDIS_TIMEOUT_MS): Promise<T> {
  return within(work, ms, () => new Error(`${what} took longer than ${ms} ms`));
}

export function startReconciler(opts: ReconcilerOptions): Reconciler {
  const { db, redis, generationQueue, dispatch, webhookQueue, quota, logger, settings } = opts;
  const batchSize = opts.batchSize ?? 200;
  const batchesPerSweep = opts.batchesPerSweep ?? 25;
  const reservationPageSize = opts.reservationPageSize ?? 200;
  const reservationPagesPerSweep = opts.reservationPagesPerSweep ?? 5;
  const leaderKey = redisKey(opts.redisPrefix, "reconciler", "leader");
  const token = randomUUID();
  // Held for two intervals: the leader renews it each sweep; another replica takes over after it stops.
  const leaseMs = String(2 * settings.intervalMs);
  // Where the walk goes on when the last sweep stopped at its batch limit (0: from the start).
  let cursor = 0;
  // Where the walk of held reservations goes on ("": from the first reference).
  let reservationCursor = "";
  let stopped = false;

  const takeLead = async () => (await bounded(leadScript.run(redis, [leaderKey], [token, leaseMs]), "taking the reconciler's lead")) === 1;

  /**
   * Re-enqueues the article's job (`add`), removing a finished one under its external_id first;
   * false when not now. The take-up is noted only once the job is back: a failed add leaves the
   * article due at the next sweep, not backed off for a take-up that never happened.
   */
  async function enqueueAgain(queue: Queue, externalId: string, state: JobState, add: () => Promise<unknown>): Promise<boolean> {
    const takeUps = await takeUpsIfDue(externalId);
    if (takeUps === undefined) return false;
    // 0 when a worker holds it: then it is live after all.
    if (state !== "missing" && (await queue.remove(externalId)) === 0) return false;
    await bounded(add(), "re-enqueueing an article's job");
    await noteTakeUp(externalId, takeUps);
    return true;
  }

  /**
   * How often the article was taken up before, when it may be taken up now; undefined while it
   * waits. An article taken up again and again (its new job ends with nothing to change, so it
   * stays owed) waits twice as long each time, up to TAKE_UP_BACKOFF_MAX_MS. Finished jobs leave
   * Redis at once, so without this memory such an article would be re-enqueued at every sweep.
   */
  async function takeUpsIfDue(externalId: string): Promise<number | undefined> {
    const [count, notBefore] = ((await bounded(redis.get(takeUpKey(externalId)), "reading an article's take-ups")) ?? "0:0").split(":").map(Number) as [number, number];
    return Date.now() < notBefore ? undefined : count;
  }

  async function noteTakeUp(externalId: string, before: number): Promise<void> {
    const waitMs = Math.min(settings.staleAfterMs * 2 ** before, TAKE_UP_BACKOFF_MAX_MS);
    await bounded(redis.set(takeUpKey(externalId), `${before + 1}:${Date.now() + waitMs}`, "PX", TAKE_UP_MEMORY_MS), "noting an article's take-up");
  }

  const takeUpKey = (externalId: string) => redisKey(opts.redisPrefix, "reconciler", "taken", externalId);

  async function takeUp(article: TakenUpArticle, owed: OwedJob): Promise<boolean> {
    const { externalId, status } = article;
    // Whichever job is owed, a live generation job still has the article (its run hands off the webhook itself).
    const generation = await stateOf(await generationQueue.getJob(externalId));
    if (generation === "live") return false;
    if (owed.queue === "generation") {
      if (generation !== "missing" && !owed.finishedIsLost) return false;
      // Into the account's line, as a new article's job goes (kit/src/fair-dispatch.ts).
      const lined = () => dispatch.enqueue([{ externalId, account: String(article.accountId), order: article.id, data: { externalId } }]);
      if (!(await enqueueAgain(generationQueue as Queue, externalId, generation, lined))) return false;
      logger.warn("article taken up again: no live generation job", { externalId, status, job: generation, action: "re-enqueued its generation job" });
      return true;
    }
    const webhook = await stateOf(await webhookQueue.getJob(externalId));
    if (webhook === "live") return false;
    if (!(await enqueueAgain(webhookQueue as Queue, externalId, webhook, () => webhookQueue.add("deliver", { externalId, versionId: owed.versionId }, { jobId: externalId })))) return false;
    logger.warn("completion webhook handed to the dispatcher again: no delivery on record and no live webhook job", {
      externalId,
      status,
      versionId: owed.versionId,
      job: webhook,
      action: "re-enqueued its webhook job",
    });
    return true;
  }

  /** Releases one held reservation that has no article; whether it was still held. */
  async function releaseOrphaned(reference: string): Promise<boolean> {
    const { reservation } = await quota.releaseWords({ reference });
    // Settled meanwhile (an article created after all, and already finished): left as it is.
    if (reservation?.state !== ReservationState.RELEASED) return false;
    logger.info("reserved words released: no article was created for them", {
      reference,
      accountId: Number(reservation.accountId),
      words: Number(reservation.words),
      heldLongerThanMs: settings.staleAfterMs,
    });
    return true;
  }

  /**
   * The walk of reservations held longer than the stale age: each page's references that name
   * no article are released. Its failures (accounts-billing away) are logged and the walk goes on
   * at the next sweep, so they never stop the article walk.
   */
  async function releaseLeftReservations(): Promise<number> {
    let released = 0;
    try {
      for (let page = 0; page < reservationPagesPerSweep && !stopped; page++) {
        // The lead is checked before every page: the article walk may have lost it.
        if (!(await takeLead())) break;
        const { references } = await quota.listHeldReservations({
          heldLongerThanMs: BigInt(settings.staleAfterMs),
          limit: reservationPageSize,
          afterReference: reservationCursor,
        });
        // Listed first, checked here after: an article created in between is seen and left alone.
        const orphaned = await referencesWithoutArticle(db, references);
        const outcomes = await Promise.all(
          orphaned.map((reference) =>
            releaseOrphaned(reference).catch((error) => {
              logger.error("could not release a reservation left without an article", { reference, error: (error as Error).message });
              return false;
            }),
          ),
        );
        released += outcomes.filter(Boolean).length;
        reservationCursor = references.length === reservationPageSize ? references[references.length - 1]! : "";
        if (reservationCursor === "") break;
      }
    } catch (error) {
      logger.error("could not sweep held reservations", { error: (error as Error).message });
    }
    return released;
  }

  /** Finished articles whose section revision's job was lost: their generation job again. */
  async function takeUpLostRevisions(): Promise<number> {
    const revised = await articlesWithStaleRevisions(db, settings.staleAfterMs, batchSize);
    const outcomes = await bounded(
      Promise.all(
        revised.map((article) =>
          takeUp(article, { queue: "generation", finishedIsLost: true }).catch((error) => {
            logger.error("could not take a section revision up again", { externalId: article.externalId, error: (error as Error).message });
            return false;
          }),
        ),
      ),
      "checking the revisions' jobs",
    );
    return outcomes.filter(Boolean).length;
  }

  async function sweep(): Promise<SweepSummary> {
    const summary = { examined: 0, takenUp: 0, reservationsReleased: 0 };
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
    if (!stopped) summary.takenUp += await takeUpLostRevisions();
    if (!stopped) summary.reservationsReleased = await releaseLeftReservations();
    if (summary.takenUp > 0 || summary.reservationsReleased > 0) logger.info("reconcile sweep", summary);
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
