// The runner's scheduler: every line an article or its provider calls wait in, behind four verbs.
//
// - enqueue: joins a line, for an account (its plan's weight orders the turns between accounts)
//   and a reason: "account_share", an article over its plan's cap on articles in flight waits in
//   its account's line (account-shares.ts); "capacity", a call waits its turn in its provider's
//   budget (provider-lines.ts, fair-gate.ts, provider-capacity.ts); "provider_unavailable", a call
//   whose every model is down waits for the probe that finds one back (outage-waits.ts). New
//   articles join the fleet's slot lines through kit/src/fair-dispatch.ts (article-store's relay
//   enqueues there), and this runner's free worker slots are fed from them (slot-feeder.ts).
// - park: the article's job waits delayed, holding no worker slot, until woken or its wake-after.
// - wake: a parked job goes on (its turn came, its provider is back, its cancel must end it).
// - release: an article gives its account's place back, and the next in line is woken.
//
// One ticket (ticket.ts) describes a waiting call wherever it waits; one park and one wake
// (job-parking.ts) serve every line; one fair-queuing rule (kit/src/lua/fair-queuing.lua) orders
// the slot lines and the budgets alike. Plans' weights reach the turns as accounts-billing
// announces a change (kit/src/plan-weights.ts).
import { DelayedError, type Job, type Queue } from "bullmq";
import { FairDispatch } from "../../../kit/src/fair-dispatch.ts";
import type { Logger } from "../../../kit/src/logger.ts";
import { followPlanWeights } from "../../../kit/src/plan-weights.ts";
import type { GenerationJob } from "../../../kit/src/queues.ts";
import type { RedisConnection } from "../../../kit/src/redis.ts";
import type { CircuitBreakers } from "../domain/circuit-breaker.ts";
import { AccountShares, PARK_MS, type AccountShare } from "./account-shares.ts";
import type { Admitted } from "./fair-gate.ts";
import { ParkedJobs, wakeJob } from "./job-parking.ts";
import { ProviderCapacity } from "./provider-capacity.ts";
import { ProviderLines, type CallInLine, type CallOnOutage, type CallScheduling } from "./provider-lines.ts";
import { SlotFeeder } from "./slot-feeder.ts";

/** An article asking for a place in its account's share of the runners (its plan's cap). */
export interface ArticleInLine {
  reason: "account_share";
  account: string;
  article: string;
  /** When it was created: the account's line is oldest first. */
  since: number;
  job: Job<GenerationJob>;
  token?: string;
}

export interface SchedulerOptions {
  /** The generation queue: the jobs parked and woken, and the slot lines beside its keys. */
  queue: Queue<GenerationJob>;
  /** The queue's own connection (the slot lines' scripts run on it). */
  queueConnection: RedisConnection;
  /** An auto-pipelined connection for the budgets' and shares' small scripts. */
  pacingConnection: RedisConnection;
  /** A connection in subscriber mode: new articles in the lines, plans' weights. */
  subscriber: RedisConnection;
  redisPrefix: string;
  /** This runner's worker slots. */
  concurrency: number;
  lockDurationMs: number;
  /** Articles in flight per account when its plan sets none (RUNNER_ACCOUNT_IN_FLIGHT); undefined: no cap. */
  defaultAccountCap?: number;
  /** The account's plan's share (accounts-billing). */
  shareOf(account: string): Promise<AccountShare>;
  breakers: CircuitBreakers;
  logger: Logger;
}

export class Scheduler implements CallScheduling {
  /** What the fleet's calls may spend of each provider's limits, and what they spent. */
  readonly budgets: ProviderCapacity;
  private readonly lines: ProviderLines;
  private readonly dispatch: FairDispatch;
  private readonly feeder: SlotFeeder;
  private readonly shares: AccountShares;
  private readonly parked: ParkedJobs;
  private readonly queue: Queue<GenerationJob>;
  private readonly logger: Logger;

  constructor(options: SchedulerOptions) {
    const { queue, logger } = options;
    this.queue = queue;
    this.logger = logger;
    this.budgets = new ProviderCapacity(options.pacingConnection, options.redisPrefix);
    // A call's turn can come while its article is still on its way to parking: waited for 5 s.
    this.lines = new ProviderLines(this.budgets, options.breakers, (article) => this.wakeOrSay(article, 5000));
    this.dispatch = new FairDispatch(options.queueConnection, queue);
    this.feeder = new SlotFeeder(this.dispatch, options.concurrency, logger, options.subscriber);
    this.shares = new AccountShares(options.pacingConnection, options.redisPrefix, {
      defaultCap: options.defaultAccountCap,
      shareOf: async (account) => {
        const share = await options.shareOf(account);
        // accounts-billing announces each plan change's weight; this restores a Redis that lost it.
        await this.dispatch.setWeight(account, share.weight).catch(() => {});
        return share;
      },
      // False for an article whose job has ended meanwhile (cancelled, failed): its place goes on to the next.
      wake: (article) => this.wake(article),
    });
    this.parked = new ParkedJobs(options.lockDurationMs);
    followPlanWeights(options.subscriber, options.redisPrefix, (weights) => {
      for (const { account, weight } of weights) this.shares.planChanged(account, weight);
    }).catch((error) => logger.error("could not listen for plans' weights", { error: (error as Error).message }));
  }

  /**
   * Joins a line. An article: returns when it may run, else parks its job in its account's line
   * (a DelayedError: the job waits). A call: its turn in its budget (parking its article when the
   * wait is long), or, with every model down, its wait for the provider's return (always parks).
   */
  enqueue(entry: ArticleInLine): Promise<void>;
  enqueue(entry: CallInLine): Promise<Admitted>;
  enqueue(entry: CallOnOutage): Promise<never>;
  enqueue(entry: CallInLine | CallOnOutage): Promise<Admitted>;
  async enqueue(entry: ArticleInLine | CallInLine | CallOnOutage): Promise<void | Admitted> {
    if (entry.reason !== "account_share") return this.lines.enqueue(entry);
    const { account, article, since, job, token } = entry;
    if (await this.shares.take(account, article, since)) return;
    await this.park(job, Date.now() + PARK_MS, token);
    // A place given while the job was parking found it not yet delayed: it wakes itself.
    if (await this.shares.holds(account, article)) await job.promote();
    throw new DelayedError();
  }

  /** Moves the job to delayed until `until` (ms since the epoch), or until it is woken. */
  park(job: Job<GenerationJob>, until: number, token?: string): Promise<void> {
    return this.parked.park(job, until, token);
  }

  /**
   * Wakes the article's parked job; one still active may be on its way to parking and is looked
   * at again for `activeWaitMs`. Whether the job is alive after this; false once it has ended.
   */
  wake(article: string, activeWaitMs = 0): Promise<boolean> {
    return wakeJob(this.queue, article, activeWaitMs);
  }

  /** The article's run ended or parked: its account's place goes to the next in line. */
  release(account: string, article: string): Promise<void> {
    return this.shares.release(account, article);
  }

  /** A job took one of this runner's worker slots. */
  slotTaken(): void {
    this.feeder.taken();
  }

  /** A job gave its slot back: it is offered to the lines at once. */
  slotFreed(): void {
    this.feeder.freed();
  }

  /** Whether a failed lock renewal was of a job this runner parked (harmless) rather than a lost lock. */
  parkedAway(jobId: string): boolean {
    return this.parked.movedAwayFrom(jobId);
  }

  /** The account's weight in every turn (its plan's share_weight). */
  async weightOf(account: string): Promise<number> {
    return (await this.shares.share(account)).weight;
  }

  /** Calls waiting in this runner, per budget: in its line (parked or not) or on its open breaker. */
  waitingCalls(): Map<string, number> {
    return this.lines.waitingCalls();
  }

  /** Articles waiting in the accounts' lines for a worker slot, over the fleet. */
  articlesInLines(): Promise<number> {
    return this.dispatch.waiting();
  }

  async stop(): Promise<void> {
    this.shares.stop();
    await this.feeder.stop();
  }

  private async wakeOrSay(article: string, activeWaitMs: number): Promise<void> {
    await this.wake(article, activeWaitMs).catch((error) => this.logger.warn("could not wake a parked article", { externalId: article, error: (error as Error).message }));
  }
}
