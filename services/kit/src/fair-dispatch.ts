// The order in which new articles reach the runners' worker slots: each account's articles wait in
// the account's own line, and the lines are taken in turn by the plans' weights (start-time fair
// queuing), for the whole fleet, in Redis. An account alone gets every free slot; with others,
// one account's backlog of thousands cannot keep another account's single article waiting behind
// it, and two accounts with backlogs get slots in the ratio of their weights.
//
// BullMQ serves its waiting list first in, first out. So a new article's generation job is added
// delayed (it holds no slot and no lock while it waits) and put in its account's line (article-store's
// outbox relay: enqueue). Runners with free slots feed the waiting list from the lines, one turn
// at a time, promoting each job chosen: never more jobs waiting than a runner has free slots, so
// the order of the turns is the order the slots are taken in (the runner's worker: feed). The
// relay announces new articles on a channel, so an idle runner feeds them at once.
//
// Turns: every account with a line has the virtual time at which its next article is due (its
// start tag); the earliest goes first, and the account's next is due 1/weight later. An account
// whose line was empty joins at the later of the fleet's current virtual time (the last turn
// given) and its own next due time when its line emptied (its finish tag): time spent idle earns no
// credit to spend in a burst later, and emptying a line and refilling it at once gains no turn.
// Within an account the oldest article goes first.
//
// Safety: a job taken from a line is noted as being promoted until its promotion is done, and any
// runner promotes again what was left noted for long (a runner that died half-way), every few seconds. A job left
// delayed anyway (no runner feeding for a day) wakes by itself after LINE_WAIT_LIMIT_MS and runs
// out of turn rather than never. A job that was promoted, retried or removed meanwhile is passed
// over: promoting it fails and changes nothing. The reconciler's re-enqueued jobs (lost ones) join
// their accounts' lines like new ones: a Redis that came back empty cannot let one account's lost
// backlog take every slot ahead of the others.
import { Job, type Queue } from "bullmq";
import type { GenerationJob } from "./queues.ts";
import type { RedisConnection } from "./redis.ts";
import { redisScript } from "./redis-scripts.ts";
import FAIR_QUEUING from "./lua/fair-queuing.lua" with { type: "text" };
import ENQUEUE from "./lua/line-enqueue.lua" with { type: "text" };
import FEED from "./lua/line-feed.lua" with { type: "text" };

/** A job never fed wakes by itself after this long. */
export const LINE_WAIT_LIMIT_MS = 86_400_000;
/** A job noted as being promoted for this long is promoted again by the next feeder. */
const PROMOTION_OVERDUE_MS = 10_000;
/** Turns given by one feed at most. */
const MAX_FEED = 1000;

/** One new article: its job's id and data, its account, and its place in the account's line. */
export interface LineEntry {
  externalId: string;
  account: string;
  /** Orders the account's line: the article's id (creation order), whether the outbox relay or the reconciler lines it up. */
  order: number;
  data: GenerationJob;
}

// The keys the scripts build from the queue's own prefix share its hash tag on a cluster, so they
// sit in the slot of the queue's waiting list that the feed reads. The turns are the rule of
// lua/fair-queuing.lua, which the provider budgets share.
const enqueueScript = redisScript(`${FAIR_QUEUING}\n${ENQUEUE}`);
const feedScript = redisScript(`${FAIR_QUEUING}\n${FEED}`);

export class FairDispatch {
  private readonly base: string;
  /** Told after new articles joined the lines (Redis pub/sub). */
  readonly channel: string;
  private readonly keys: { ready: string; now: string; weights: string; finish: string; promoting: string; queueWaiting: string; waiting: string };

  constructor(
    private readonly redis: RedisConnection,
    private readonly queue: Queue<GenerationJob>,
  ) {
    this.base = queue.toKey("fair:");
    this.channel = `${this.base}joined`;
    this.keys = { ready: `${this.base}ready`, now: `${this.base}now`, weights: `${this.base}weights`, finish: `${this.base}finish`, promoting: `${this.base}promoting`, queueWaiting: queue.toKey("wait"), waiting: `${this.base}waiting` };
  }

  /** Adds the articles' jobs, delayed, and puts each in its account's line (both safe to repeat). */
  async enqueue(entries: LineEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.queue.addBulk(entries.map(({ externalId, data }) => ({ name: "generate", data, opts: { jobId: externalId, delay: LINE_WAIT_LIMIT_MS } })));
    const lined = entries.map(({ account, order, externalId }) => ({ account, order: String(order), id: externalId }));
    await enqueueScript.run(this.redis, [this.keys.ready, this.keys.now, this.keys.finish, this.keys.waiting], [JSON.stringify({ base: this.base, entries: lined })]);
    // Runners with free slots feed at once rather than at their next tick.
    await this.redis.publish(this.channel, "");
  }

  /** Promotes the next articles in turn, so that as many jobs wait as `freeSlots`; returns how many were promoted. */
  async feed(freeSlots: number): Promise<number> {
    if (freeSlots <= 0) return 0;
    const keys = [this.keys.ready, this.keys.now, this.keys.weights, this.keys.promoting, this.keys.queueWaiting, this.keys.waiting, this.keys.finish];
    const args = { base: this.base, freeSlots, now: Date.now(), maxFeed: MAX_FEED };
    return this.promote((await feedScript.run(this.redis, keys, [JSON.stringify(args)])) as string[]);
  }

  /** Promotes again what a feeder took from the lines and left half-way (it died); returns how many were promoted. */
  async promoteOverdue(): Promise<number> {
    return this.promote((await this.redis.zrangebyscore(this.keys.promoting, "-inf", Date.now() - PROMOTION_OVERDUE_MS, "LIMIT", 0, 100)) as string[]);
  }

  private async promote(promoting: string[]): Promise<number> {
    if (promoting.length === 0) return 0;
    let promoted = 0;
    const done: string[] = [];
    await Promise.all(
      promoting.map((id) =>
        new Job(this.queue, "generate", { externalId: id }, {}, id).promote().then(
          () => void (promoted++, done.push(id)),
          // BullMQ refuses a job that is not delayed any more (promoted, retried, gone), naming the
          // command: it is passed over. Any other failure leaves it noted for the next feeder.
          (error: Error) => void (/\bpromote\b/.test(error.message) && done.push(id)),
        ),
      ),
    );
    if (done.length) await this.redis.zrem(this.keys.promoting, ...done);
    return promoted;
  }

  /** The account's weight in the turns from now on (its plan's share_weight). */
  async setWeight(account: string, weight: number): Promise<void> {
    await this.redis.hset(this.keys.weights, account, String(weight));
  }

  /** Articles waiting in the accounts' lines for a free worker slot, over every account. */
  async waiting(): Promise<number> {
    return this.redis.llen(this.keys.waiting);
  }
}
