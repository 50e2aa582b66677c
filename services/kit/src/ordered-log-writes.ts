// Writes to an article's event log that are tried again until they land, in order per article.
// A write the log refused is not dropped: a Redis Cluster between masters answers MOVED,
// CLUSTERDOWN or "Too many Cluster redirections" for seconds after a failover (13-17 s seen),
// and a watcher must still read every step and the article's end once it settles. The writes
// made after a refused one wait behind it, so the log keeps the order they were made in.
import type { RedisConnection } from "./redis.ts";

// Longer than a cluster has been seen to take to settle after a master's failover; past it the
// write is given up (and reported), since the article record, not the log, is the truth.
export const RETRY_FOR_MS = 60_000;
const RETRY_DELAYS_MS = [100, 250, 500, 1_000, 2_000];

/** One attempt at a write; `retry` is true from the second on (a write that may have landed before its error was seen). */
export type LogWrite = (retry: boolean) => Promise<unknown>;

export class OrderedLogWrites {
  /** Per article, the last write queued: the next one starts when it has landed or been given up. */
  private readonly tails = new Map<string, Promise<void>>();

  constructor(private readonly retryForMs = RETRY_FOR_MS) {}

  /** Queues `write` behind the article's earlier ones; resolves once it landed, or was given up (after `onGiveUp`). */
  enqueue(externalId: string, write: LogWrite, onGiveUp: (error: Error) => void): Promise<void> {
    const previous = this.tails.get(externalId);
    const landed = previous ? previous.then(() => this.untilLanded(write, onGiveUp)) : this.untilLanded(write, onGiveUp);
    this.tails.set(externalId, landed);
    void landed.then(() => {
      if (this.tails.get(externalId) === landed) this.tails.delete(externalId);
    });
    return landed;
  }

  /** Resolves once every write queued so far for the article has landed or been given up. */
  settled(externalId: string): Promise<void> {
    return this.tails.get(externalId) ?? Promise.resolve();
  }

  /** Articles with a write under way or waiting. */
  get pending(): number {
    return this.tails.size;
  }

  private async untilLanded(write: LogWrite, onGiveUp: (error: Error) => void): Promise<void> {
    const giveUpAt = Date.now() + this.retryForMs;
    for (let attempt = 0; ; attempt++) {
      try {
        await write(attempt > 0);
        return;
      } catch (error) {
        if (Date.now() >= giveUpAt) return onGiveUp(error as Error);
        await Bun.sleep(RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length - 1)]!);
      }
    }
  }
}

// One queue per connection (a process has one connection to its log), so every writer of the
// process shares the per-article order.
const byConnection = new WeakMap<RedisConnection, OrderedLogWrites>();

/** The ordered, retried log writes of a connection. */
export function logWritesOf(redis: RedisConnection): OrderedLogWrites {
  let writes = byConnection.get(redis);
  if (!writes) byConnection.set(redis, (writes = new OrderedLogWrites()));
  return writes;
}
