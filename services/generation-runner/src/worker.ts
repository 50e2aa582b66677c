// The BullMQ worker of the "generation" queue. Attempts and backoff come from the job catalog
// (QUEUES.generation.defaults); only the last failed attempt marks the article failed and gives
// its reserved words back. A worker that dies loses its job lock, and BullMQ hands the job to
// another worker (or this one restarted), which resumes from the checkpoints.
import { currentRequestId, withRequestId } from "../../kit/src/request-context.ts";
import { Code, ConnectError } from "@connectrpc/connect";
import { DelayedError, UnrecoverableError, Worker, type Job } from "bullmq";
import { ArticleLifecycleService, ArticleStoreService } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { ArticleRevisionService } from "../../../proto/gen/articles/article_store/v1/revisions_pb.ts";
import { ArticleVersionService } from "../../../proto/gen/articles/article_store/v1/versions_pb.ts";
import { checkStoredVersion } from "./rpc-originality.ts";
import { QuotaService } from "../../../proto/gen/articles/accounts_billing/v1/quota_pb.ts";
import { WorkflowSnapshotService } from "../../../proto/gen/articles/workflow_catalog/v1/snapshots_pb.ts";
import { serviceClient } from "../../kit/src/clients.ts";
import { jobLocks, openQueue, publishingJobId, QUEUES, type GenerationJob, type PublishingJob, type WebhookJob } from "../../kit/src/queues.ts";
import { connectRedis, isCluster, queuePrefix } from "../../kit/src/redis.ts";
import type { ServiceContext } from "../../kit/src/service-process.ts";
import type { RunnerConfig } from "./config.ts";
import type { schema } from "./db/client.ts";
import { runCost, updateRun } from "./domain/checkpoints.ts";
import { ImageStores } from "./domain/image-store.ts";
import { generateArticle, type JobControl, type PipelineDeps } from "./domain/pipeline.ts";
import { PinnedSnapshotMemory } from "./domain/pinned-snapshots.ts";
import { articleReader } from "./domain/article-reads.ts";
import { formatUsd } from "../../kit/src/rules/usd.ts";
import { collectGarbageAbove } from "./memory-ceiling.ts";
import { FETCH_SHARE } from "./domain/provider-connections.ts";
import { onJobsStalledTooOften } from "./stalled-jobs.ts";
import { CancelWatch, endedByCancel, settleCancelledRun } from "./domain/cancellation.ts";
import { CANCELLED_REASON } from "../../kit/src/article-events.ts";
import { articleDuration, countWorkerJobs, watchArticlesInLines, watchQueueDepth, watchWaitingCalls } from "../../kit/src/metrics.ts";
import { currentTraceparent, inJobSpan } from "../../kit/src/tracing.ts";
import { AccountShares, PARK_MS } from "./domain/account-shares.ts";
import { FairDispatch } from "../../kit/src/fair-dispatch.ts";
import { followPlanWeights } from "../../kit/src/plan-weights.ts";
import { SlotFeeder } from "./domain/slot-feeder.ts";
import { CircuitBreakers } from "./domain/circuit-breaker.ts";
import { Pacer } from "./domain/paced-call.ts";
import { dependencyWaitMs, runFailureOf, runFailureStep, stepAfterFailing, type ArticleFailing } from "./run-failures.ts";
import { ProviderCapacity } from "./domain/provider-capacity.ts";
import { timestampMs } from "./domain/pipeline.ts";
import { pacedSearch } from "./research/paced-search.ts";
import { settledWithin } from "../../kit/src/deadline.ts";
import { wakeJob } from "./domain/job-waking.ts";
import { isRunningStatus } from "../../kit/src/rules/article-statuses.ts";

// A job that stalls (its worker died) more often than this is failed for good: a run that keeps
// killing its worker should not loop forever. Its article is then failed (see stalled-jobs.ts).
const MAX_STALLS = 5;
// How long SIGTERM waits for in-flight articles before leaving them to the stalled-job recovery.
const DRAIN_MS = 20_000;
// How long a job that spent its attempts without ending its article waits before it runs again,
// and for how long after its creation it keeps doing so.
const UNFAILABLE_RETRY_MS = Math.min(60_000, 5 * QUEUES.generation.defaults.backoff.delay);

/** The job's data without the outage a parked article carried. */
function withoutOutage({ outage: _, ...data }: GenerationJob): GenerationJob {
  return data;
}

export async function startGenerationWorker(ctx: ServiceContext<typeof schema>, runner: RunnerConfig): Promise<() => Promise<void>> {
  const { config, credential, logger } = ctx;
  const via = (baseUrl: string) => ({ baseUrl, credential, timeoutMs: 15_000 });
  const connection = connectRedis(config.redisUrl);
  const prefix = queuePrefix(config.redisPrefix, isCluster(connection));
  // The run events of every article in flight leave on a connection of their own that sends the
  // commands of one turn of the event loop in one write.
  const eventLogConnection = connectRedis(config.redisUrl, { enableAutoPipelining: true });
  const webhooks = openQueue<WebhookJob>("webhooks", connection, config.redisPrefix);
  const publications = openQueue<PublishingJob>("publishing", connection, config.redisPrefix);
  const snapshots = serviceClient(WorkflowSnapshotService, via(config.services.workflowCatalog));

  const articles = serviceClient(ArticleStoreService, via(config.services.articleStore));
  const versions = serviceClient(ArticleVersionService, via(config.services.articleStore));
  const generationQueue = openQueue<GenerationJob>("generation", connection, config.redisPrefix);
  // Provider budgets, breakers and account shares: small scripts on a connection of their own.
  const pacingConnection = connectRedis(config.redisUrl, { enableAutoPipelining: true });
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
  const deps: PipelineDeps = {
    db: ctx.database.db,
    logger,
    clients: runner.clients,
    pacer,
    articles,
    readArticle: articleReader(articles),
    lifecycle: serviceClient(ArticleLifecycleService, via(config.services.articleStore)),
    snapshots: new PinnedSnapshotMemory((pin) => snapshots.getSnapshot(pin)),
    quota: serviceClient(QuotaService, via(config.services.accountsBilling)),
    async enqueueWebhook(job) {
      // One completion webhook per article: the job id is its external_id (BullMQ ids may not contain ":").
      const trace = currentTraceparent();
      const requestId = currentRequestId();
      await webhooks.add("deliver", { ...job, ...(trace ? { trace } : {}), ...(requestId ? { requestId } : {}) }, { jobId: job.externalId });
    },
    async enqueuePublication(job) {
      const trace = currentTraceparent();
      const requestId = currentRequestId();
      await publications.add("publish", { ...job, ...(trace ? { trace } : {}), ...(requestId ? { requestId } : {}) }, { jobId: publishingJobId(job) });
    },
    detector: runner.detector,
    research: runner.research && { ...runner.research, provider: pacedSearch(runner.research.provider, pacer, runner.searchRequestsPerMinute) },
    imageModel: runner.imageModel,
    imageStores: new ImageStores(ctx.database.db, runner.imageBucket),
    publicBaseUrl: runner.publicBaseUrl,
    batchPoll: { firstMs: runner.batchPollMs, maxMs: runner.batchPollMaxMs },
    progressKeepAliveMs: runner.progressKeepAliveMs,
    repairCalls: runner.repairCalls,
    eventLog: { redis: eventLogConnection, redisPrefix: config.redisPrefix },
    shareWeight: async (account) => (await shares.share(account)).weight,
    revisions: serviceClient(ArticleRevisionService, via(config.services.articleStore)),
    checkVersion: (externalId, number) => checkStoredVersion({ detector: runner.detector, versions, lifecycle: deps.lifecycle, readArticle: deps.readArticle }, externalId, number),
  };
  // The runner's notices: cancels, and new articles in the accounts' lines.
  const subscriber = connectRedis(config.redisUrl);
  // A job parked between batch polls, or waiting in its account's line, is woken by its article's
  // cancel, to end it at once.
  const cancels = new CancelWatch(subscriber, config.redisPrefix, logger, (externalId) => {
    wakeJob(generationQueue, externalId).catch(() => {});
  });
  // New articles reach the worker slots in the accounts' fair turns (kit/src/fair-dispatch.ts).
  const dispatch = new FairDispatch(connection, generationQueue);
  const feeder = new SlotFeeder(dispatch, runner.concurrency, logger, subscriber);
  watchArticlesInLines(() => dispatch.waiting());
  const shares = new AccountShares(pacingConnection, config.redisPrefix, {
    defaultCap: runner.accountInFlight,
    async shareOf(account) {
      const share = await deps.quota.getGenerationShare({ accountId: BigInt(account) });
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

  /** Terminal failure: status failed with the reason (no webhook), reserved words released; "finished" when it had already completed (or is unknown). */
  async function failArticle(externalId: string, reason: string): Promise<"failed" | "finished"> {
    // The article's cost is the ledger's total: a report with the last steps' costs may never have gone out.
    const cost = await runCost(deps.db, externalId).then(formatUsd, () => undefined);
    for (let attempt = 1; ; attempt++) {
      try {
        await deps.lifecycle.failArticle({ externalId, reason: reason.slice(0, 2000), cost });
        await deps.quota.releaseWords({ reference: externalId });
        logger.warn("article failed", { externalId, reason });
        return "failed";
      } catch (error) {
        // Completed meanwhile (or unknown): nothing to fail, and its words are the completion's to settle.
        if (error instanceof ConnectError && (error.code === Code.FailedPrecondition || error.code === Code.NotFound)) return "finished";
        if (attempt >= 5) throw error;
        await Bun.sleep(500 * attempt);
      }
    }
  }

  // One run (job activation): its span continues the creating request's trace; its time is counted by outcome.
  async function runJob(job: Job<GenerationJob>, token?: string): Promise<string> {
    const started = performance.now();
    let outcome = "error";
    feeder.taken();
    try {
      // The run's log lines, calls and webhook carry the id of the request that created the article.
      outcome = await withRequestId(job.data.requestId, () =>
        inJobSpan("generation run", job.data.trace, { "messaging.destination.name": QUEUES.generation.name }, () => runJobInSpan(job, token)),
      );
      return outcome;
    } catch (error) {
      outcome = error instanceof DelayedError ? "parked" : "error";
      throw error;
    } finally {
      feeder.freed();
      articleDuration.labels(outcome).observe((performance.now() - started) / 1000);
    }
  }

  // A job moved to delayed (parked, or resumed later) stays in BullMQ's lock renewal until its
  // processor has returned, so a renewal in between fails, harmlessly: the job is no longer this
  // runner's to hold. Its id is kept for a lock's length to tell that failure from a lost lock.
  const movedAway = new Set<string>();
  const moveToDelayed = async (job: Job<GenerationJob>, until: number, token?: string) => {
    movedAway.add(job.id!);
    setTimeout(() => movedAway.delete(job.id!), runner.lockDurationMs).unref?.();
    await job.moveToDelayed(until, token);
  };

  async function runJobInSpan(job: Job<GenerationJob>, token?: string): Promise<string> {
    const { externalId } = job.data;
    const watched = cancels.watch(externalId);
    const control: JobControl = {
      signal: watched.signal,
      finalAttempt: job.attemptsMade + 1 >= (job.opts.attempts ?? 1),
      resumedFromPark: job.data.parkedInAttempt === job.attemptsMade,
      async resumeLater(delayMs) {
        await moveToDelayed(job, Date.now() + delayMs, token);
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
    let share: { account: string } | undefined;
    try {
      const article = await deps.readArticle(externalId);
      // Over its account's cap, the article waits in the account's line without holding a worker slot.
      if (article && isRunningStatus(article.status)) {
        const account = String(article.accountId);
        if (!(await shares.take(account, externalId, timestampMs(article.createdAt)))) {
          await moveToDelayed(job, Date.now() + PARK_MS, token);
          // A place given while the job was parking found it not yet delayed: it wakes itself.
          if (await shares.holds(account, externalId)) await job.promote();
          throw new DelayedError();
        }
        share = { account };
      }
      return await generateArticle(deps, externalId, control, article);
    } catch (error) {
      if (error instanceof DelayedError) throw error;
      if (await endedByCancel(deps.articles, externalId, error)) {
        const words = await settleCancelledRun(deps.db, deps.quota, externalId);
        // The cancel failed the article before its finished steps' costs were all reported.
        const cost = await runCost(deps.db, externalId).then(formatUsd, () => undefined);
        if (cost !== undefined) await deps.lifecycle.failArticle({ externalId, reason: CANCELLED_REASON, cost }).catch(() => {});
        await updateRun(deps.db, externalId, { lastError: "cancelled by the client", finishedAt: new Date() }).catch(() => {});
        logger.info("article cancelled", { externalId, settledWords: words });
        return "cancelled";
      }
      // The article was failed or finished elsewhere while this run was under way.
      if (error instanceof ConnectError && error.code === Code.FailedPrecondition) {
        const found = await deps.articles.getArticle({ identifier: externalId }).catch(() => undefined);
        if (found?.article && !isRunningStatus(found.article.status)) return "skipped";
      }
      const reason = error instanceof Error ? error.message : String(error);
      // Best effort (no run row yet is a no-op): the reason must not stand in the way of failing the article.
      await updateRun(deps.db, externalId, { lastError: reason }).catch(() => {});
      // The policy of run-failures.ts decides what comes next.
      const failure = runFailureOf(error, { ageMs: Date.now() - job.timestamp, finalAttempt: control.finalAttempt });
      const step = runFailureStep(failure, runner.outageLimitMs);
      if (step === "wait-for-dependency") {
        const waitMs = dependencyWaitMs(job.attemptsStarted, job.attemptsMade, runner.dependencyWaitMs);
        logger.warn("a dependency is unavailable: the article waits for it", { externalId, waitMs, error: failure.dependencyOutage });
        // Awaited here, so the job's DelayedError is handled while `finally` gives the account's slot back.
        return await control.resumeLater(waitMs);
      }
      if (step === "fail-article") {
        let ended: ArticleFailing;
        try {
          ended = await failArticle(externalId, reason);
        } catch (unreachable) {
          logger.error("could not fail the article", { externalId, error: (unreachable as Error).message });
          ended = "unreachable";
        }
        if (stepAfterFailing(ended, Date.now() - job.timestamp) === "run-again-later") {
          logger.warn("the job runs again later", { externalId, article: ended === "finished" ? "completed, hand-offs pending" : "unreachable" });
          return await control.resumeLater(UNFAILABLE_RETRY_MS);
        }
        throw new UnrecoverableError(reason);
      }
      logger.warn("generation attempt failed; it will be retried", { externalId, attempt: job.attemptsMade + 1, reason });
      // The next attempt rides out an outage of its own.
      if (job.data.outage) await job.updateData(withoutOutage(job.data)).catch(() => {});
      throw error;
    } finally {
      watched.done();
      if (share) await shares.release(share.account, externalId).catch((error) => logger.warn("could not give an account's slot back", { externalId, error: (error as Error).message }));
    }
  }

  // BullMQ leaves connections it was handed open on close; these are closed in the stop function.
  const workerConnection = connectRedis(config.redisUrl);
  const worker = new Worker<GenerationJob, string>(QUEUES.generation.name, runJob, {
    connection: workerConnection,
    prefix,
    concurrency: runner.concurrency,
    ...jobLocks(runner.lockDurationMs),
    maxStalledCount: MAX_STALLS,
  });
  worker.on("error", (error) => {
    const renewed = /^could not renew lock for job (.+)$/.exec(error.message)?.[1];
    if (renewed !== undefined && movedAway.has(renewed)) return logger.debug("no lock to renew: the job was parked", { jobId: renewed });
    logger.error("generation worker error", { error: error.message });
  });
  countWorkerJobs(worker);
  watchQueueDepth(generationQueue);

  // Jobs failed for stalling too often never reach `runJob`; their articles are failed here.
  onJobsStalledTooOften(worker, (job) => {
    const { externalId } = job.data;
    failArticle(externalId, `the generation worker stopped ${MAX_STALLS + 1} times while running this article`).catch((error) =>
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
