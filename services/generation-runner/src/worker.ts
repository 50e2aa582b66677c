// The BullMQ worker of the "generation" queue. Attempts and backoff come from the job catalog
// (QUEUES.generation.defaults); only the last failed attempt marks the article failed and gives
// its reserved words back. A worker that dies loses its job lock, and BullMQ hands the job to
// another worker (or this one restarted), which resumes from the checkpoints.
import { withRequestId } from "../../kit/src/request-context.ts";
import { DelayedError, Worker, type Job } from "bullmq";
import { jobLocks, openQueue, QUEUES, type GenerationJob, type PublishingJob, type WebhookJob } from "../../kit/src/queues.ts";
import { connectRedis, isCluster, queuePrefix } from "../../kit/src/redis.ts";
import type { ServiceContext } from "../../kit/src/service-process.ts";
import type { RunnerConfig } from "./config.ts";
import type { schema } from "./db/client.ts";
import { generateArticle, timestampMs, type PipelineDeps } from "./domain/pipeline.ts";
import { collectGarbageAbove } from "./memory-ceiling.ts";
import { FETCH_SHARE } from "./domain/provider-connections.ts";
import { onJobsStalledTooOften } from "./stalled-jobs.ts";
import { CancelWatch } from "./domain/cancellation.ts";
import { articleDuration, countWorkerJobs, watchArticlesInLines, watchQueueDepth, watchWaitingCalls } from "../../kit/src/metrics.ts";
import { inJobSpan } from "../../kit/src/tracing.ts";
import { AccountShares, PARK_MS, ParkedJobs, SlotFeeder, ProviderCapacity, wakeJob } from "./scheduler/index.ts";
import { FairDispatch } from "../../kit/src/fair-dispatch.ts";
import { followPlanWeights } from "../../kit/src/plan-weights.ts";
import { CircuitBreakers } from "./domain/circuit-breaker.ts";
import { Pacer } from "./domain/paced-call.ts";
import { settledWithin } from "../../kit/src/deadline.ts";
import { isRunningStatus } from "../../kit/src/rules/article-statuses.ts";
import { pipelineDeps, runnerClients } from "./pipeline-wiring.ts";
import { jobControl } from "./job-control.ts";
import { afterRunError, failArticle, type FailedRunDeps } from "./failed-runs.ts";

// A job that stalls (its worker died) more often than this is failed for good: a run that keeps
// killing its worker should not loop forever. Its article is then failed (see stalled-jobs.ts).
const MAX_STALLS = 5;
// How long SIGTERM waits for in-flight articles before leaving them to the stalled-job recovery.
const DRAIN_MS = 20_000;

/** What a job's run needs besides the pipeline's deps. */
interface JobRunning {
  deps: PipelineDeps;
  failures: FailedRunDeps;
  shares: AccountShares;
  feeder: SlotFeeder;
  cancels: CancelWatch;
  parked: ParkedJobs;
}

export async function startGenerationWorker(ctx: ServiceContext<typeof schema>, runner: RunnerConfig): Promise<() => Promise<void>> {
  const { config, logger } = ctx;
  const connection = connectRedis(config.redisUrl);
  const prefix = queuePrefix(config.redisPrefix, isCluster(connection));
  // The run events of every article in flight leave on a connection of their own that sends the
  // commands of one turn of the event loop in one write.
  const eventLogConnection = connectRedis(config.redisUrl, { enableAutoPipelining: true });
  // Provider budgets, breakers and account shares: small scripts on a connection of their own.
  const pacingConnection = connectRedis(config.redisUrl, { enableAutoPipelining: true });
  // The runner's notices: cancels, and new articles in the accounts' lines.
  const subscriber = connectRedis(config.redisUrl);
  const webhooks = openQueue<WebhookJob>("webhooks", connection, config.redisPrefix);
  const publications = openQueue<PublishingJob>("publishing", connection, config.redisPrefix);
  const generationQueue = openQueue<GenerationJob>("generation", connection, config.redisPrefix);
  const clients = runnerClients(ctx);

  const pacer = new Pacer(
    new ProviderCapacity(pacingConnection, config.redisPrefix),
    new CircuitBreakers(pacingConnection, config.redisPrefix, runner.breakerCooldownMs),
    logger,
    runner.outageLimitMs,
    runner.providerRetryDelayMs,
    // A call's turn can come while its article is still on its way to parking: waited for 5 s.
    (externalId) => wakeJob(generationQueue, externalId, 5000).then(() => undefined).catch((error) => logger.warn("could not wake a parked article", { externalId, error: (error as Error).message })),
  );
  watchWaitingCalls(() => pacer.waitingCalls());
  // New articles reach the worker slots in the accounts' fair turns (kit/src/fair-dispatch.ts).
  const dispatch = new FairDispatch(connection, generationQueue);
  const feeder = new SlotFeeder(dispatch, runner.concurrency, logger, subscriber);
  watchArticlesInLines(() => dispatch.waiting());
  const shares = new AccountShares(pacingConnection, config.redisPrefix, {
    defaultCap: runner.accountInFlight,
    async shareOf(account) {
      const share = await clients.quota.getGenerationShare({ accountId: BigInt(account) });
      const weight = share.shareWeight || 1;
      // accounts-billing writes each plan change's weight (kit/src/plan-weights.ts); this restores a Redis that lost it.
      await dispatch.setWeight(account, weight).catch(() => {});
      return { cap: share.articlesInFlight, weight };
    },
    // False for an article whose job has ended meanwhile (cancelled, failed): its place goes on to the next.
    wake: (externalId) => wakeJob(generationQueue, externalId),
  });
  followPlanWeights(subscriber, config.redisPrefix, (weights) => {
    for (const { account, weight } of weights) shares.planChanged(account, weight);
  }).catch((error) => logger.error("could not listen for plans' weights", { error: (error as Error).message }));

  const deps = pipelineDeps(ctx, runner, { clients, pacer, webhooks, publications, eventLog: eventLogConnection, shareWeight: async (account) => (await shares.share(account)).weight });
  const failures: FailedRunDeps = { ...deps, outageLimitMs: runner.outageLimitMs, dependencyWaitMs: runner.dependencyWaitMs };
  // A job parked between batch polls, or waiting in its account's line, is woken by its article's
  // cancel, to end it at once.
  const cancels = new CancelWatch(subscriber, config.redisPrefix, logger, (externalId) => {
    wakeJob(generationQueue, externalId).catch(() => {});
  });
  const parked = new ParkedJobs(runner.lockDurationMs);
  const running: JobRunning = { deps, failures, shares, feeder, cancels, parked };

  // BullMQ leaves connections it was handed open on close; these are closed in the stop function.
  const workerConnection = connectRedis(config.redisUrl);
  const worker = new Worker<GenerationJob, string>(QUEUES.generation.name, (job, token) => runJob(running, job, token), {
    connection: workerConnection,
    prefix,
    concurrency: runner.concurrency,
    ...jobLocks(runner.lockDurationMs),
    maxStalledCount: MAX_STALLS,
  });
  worker.on("error", (error) => {
    const renewed = /^could not renew lock for job (.+)$/.exec(error.message)?.[1];
    if (renewed !== undefined && parked.movedAwayFrom(renewed)) return logger.debug("no lock to renew: the job was parked", { jobId: renewed });
    logger.error("generation worker error", { error: error.message });
  });
  countWorkerJobs(worker);
  watchQueueDepth(generationQueue);

  // Jobs failed for stalling too often never reach `runJob`; their articles are failed here.
  onJobsStalledTooOften(worker, (job) => {
    const { externalId } = job.data;
    failArticle(failures, externalId, `the generation worker stopped ${MAX_STALLS + 1} times while running this article`).catch((error) =>
      logger.error("could not fail a stalled article", { externalId, error: (error as Error).message }),
    );
  });

  const stopCollecting = collectGarbageAbove(runner.memorySoftLimitBytes);
  logger.info("generation worker started", { concurrency: runner.concurrency, lockDurationMs: runner.lockDurationMs, modelCallsOnFetch: FETCH_SHARE });
  return async () => {
    stopCollecting();
    shares.stop();
    await feeder.stop();
    if (!(await settledWithin(worker.close(), DRAIN_MS))) await worker.close(true);
    await webhooks.close();
    await publications.close();
    await generationQueue.close();
    for (const c of [connection, eventLogConnection, workerConnection, subscriber, pacingConnection]) c.disconnect();
  };
}

// One run (job activation): its span continues the creating request's trace; its time is counted by outcome.
async function runJob(running: JobRunning, job: Job<GenerationJob>, token?: string): Promise<string> {
  const started = performance.now();
  let outcome = "error";
  running.feeder.taken();
  try {
    // The run's log lines, calls and webhook carry the id of the request that created the article.
    outcome = await withRequestId(job.data.requestId, () =>
      inJobSpan("generation run", job.data.trace, { "messaging.destination.name": QUEUES.generation.name }, () => runJobInSpan(running, job, token)),
    );
    return outcome;
  } catch (error) {
    outcome = error instanceof DelayedError ? "parked" : "error";
    throw error;
  } finally {
    running.feeder.freed();
    articleDuration.labels(outcome).observe((performance.now() - started) / 1000);
  }
}

async function runJobInSpan({ deps, failures, shares, cancels, parked }: JobRunning, job: Job<GenerationJob>, token?: string): Promise<string> {
  const { externalId } = job.data;
  const watched = cancels.watch(externalId);
  const control = jobControl(job, token, parked, watched.signal, deps.logger);
  let share: { account: string } | undefined;
  try {
    const article = await deps.readArticle(externalId);
    // Over its account's cap, the article waits in the account's line without holding a worker slot.
    if (article && isRunningStatus(article.status)) {
      const account = String(article.accountId);
      if (!(await shares.take(account, externalId, timestampMs(article.createdAt)))) {
        await parked.park(job, Date.now() + PARK_MS, token);
        // A place given while the job was parking found it not yet delayed: it wakes itself.
        if (await shares.holds(account, externalId)) await job.promote();
        throw new DelayedError();
      }
      share = { account };
    }
    return await generateArticle(deps, externalId, control, article);
  } catch (error) {
    if (error instanceof DelayedError) throw error;
    // Awaited here, so a DelayedError (the job waits) is handled while `finally` gives the account's slot back.
    return await afterRunError(failures, job, control, error);
  } finally {
    watched.done();
    if (share) await shares.release(share.account, externalId).catch((error) => deps.logger.warn("could not give an account's slot back", { externalId, error: (error as Error).message }));
  }
}
