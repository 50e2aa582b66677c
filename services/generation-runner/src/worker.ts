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
import { Scheduler } from "./scheduler/index.ts";
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
  scheduler: Scheduler;
  cancels: CancelWatch;
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

  const breakers = new CircuitBreakers(pacingConnection, config.redisPrefix, runner.breakerCooldownMs);
  const scheduler = new Scheduler({
    queue: generationQueue,
    queueConnection: connection,
    pacingConnection,
    subscriber,
    redisPrefix: config.redisPrefix,
    concurrency: runner.concurrency,
    lockDurationMs: runner.lockDurationMs,
    defaultAccountCap: runner.accountInFlight,
    async shareOf(account) {
      const share = await clients.quota.getGenerationShare({ accountId: BigInt(account) });
      return { cap: share.articlesInFlight, weight: share.shareWeight || 1 };
    },
    breakers,
    logger,
  });
  watchWaitingCalls(() => scheduler.waitingCalls());
  watchArticlesInLines(() => scheduler.articlesInLines());
  const pacer = new Pacer(scheduler, breakers, logger, runner.outageLimitMs, runner.providerRetryDelayMs);

  const deps = pipelineDeps(ctx, runner, { clients, pacer, webhooks, publications, eventLog: eventLogConnection, shareWeight: (account) => scheduler.weightOf(account) });
  const failures: FailedRunDeps = { ...deps, outageLimitMs: runner.outageLimitMs, dependencyWaitMs: runner.dependencyWaitMs };
  // A job parked between batch polls, or waiting in its account's line, is woken by its article's
  // cancel, to end it at once.
  const cancels = new CancelWatch(subscriber, config.redisPrefix, logger, (externalId) => {
    scheduler.wake(externalId).catch(() => {});
  });
  const running: JobRunning = { deps, failures, scheduler, cancels };

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
    if (renewed !== undefined && scheduler.parkedAway(renewed)) return logger.debug("no lock to renew: the job was parked", { jobId: renewed });
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
    await scheduler.stop();
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
  running.scheduler.slotTaken();
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
    running.scheduler.slotFreed();
    articleDuration.labels(outcome).observe((performance.now() - started) / 1000);
  }
}

async function runJobInSpan({ deps, failures, scheduler, cancels }: JobRunning, job: Job<GenerationJob>, token?: string): Promise<string> {
  const { externalId } = job.data;
  const watched = cancels.watch(externalId);
  const control = jobControl(job, token, scheduler, watched.signal, deps.logger);
  let share: { account: string } | undefined;
  try {
    const article = await deps.readArticle(externalId);
    // Over its account's cap, the article waits in the account's line without holding a worker slot.
    if (article && isRunningStatus(article.status)) {
      const account = String(article.accountId);
      await scheduler.enqueue({ reason: "account_share", account, article: externalId, since: timestampMs(article.createdAt), job, token });
      share = { account };
    }
    return await generateArticle(deps, externalId, control, article);
  } catch (error) {
    if (error instanceof DelayedError) throw error;
    // Awaited here, so a DelayedError (the job waits) is handled while `finally` gives the account's slot back.
    return await afterRunError(failures, job, control, error);
  } finally {
    watched.done();
    if (share) await scheduler.release(share.account, externalId).catch((error) => deps.logger.warn("could not give an account's slot back", { externalId, error: (error as Error).message }));
  }
}
