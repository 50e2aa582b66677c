// Feeds this runner's free worker slots from the accounts' lines (kit/src/fair-dispatch.ts): when
// a slot frees (an article ends or parks), when new articles join the lines (the relay's notice)
// and on a tick in case a notice was missed, it asks for as many turns as the runner has free
// slots, so every idle slot of the fleet is used and new articles start in the accounts' fair
// order. One feed at a time per runner; a request during a feed runs one more.
import type { FairDispatch } from "../../../kit/src/fair-dispatch.ts";
import type { Logger } from "../../../kit/src/logger.ts";
import type { RedisConnection } from "../../../kit/src/redis.ts";

/** How often a runner looks at the lines unasked (a notice lost while its subscriber reconnected). */
const FEED_TICK_MS = 500;
/** How often a runner promotes what another feeder took from the lines and left half-way. */
const OVERDUE_CHECK_MS = 5_000;

export class SlotFeeder {
  /** Jobs this runner's worker is running now. */
  private occupied = 0;
  private feeding: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private failing = false;
  private overdueCheckedAt = 0;
  private readonly tick: ReturnType<typeof setInterval>;

  constructor(
    private readonly dispatch: FairDispatch,
    private readonly concurrency: number,
    private readonly logger: Logger,
    /** A connection in subscriber mode (it may listen to other channels too). */
    subscriber: RedisConnection,
  ) {
    this.tick = setInterval(() => this.soon(), FEED_TICK_MS);
    this.tick.unref?.();
    subscriber.subscribe(dispatch.channel).catch((error) => logger.error("could not listen for new articles in the lines", { error: (error as Error).message }));
    subscriber.on("message", (from: string) => {
      if (from === dispatch.channel) this.soon();
    });
  }

  /** A job took one of the runner's slots. */
  taken(): void {
    this.occupied++;
  }

  /** A job gave its slot back (ended, parked or failed): the slot is offered at once. */
  freed(): void {
    this.occupied--;
    this.soon();
  }

  private soon(): void {
    if (this.stopped) return;
    if (this.feeding) {
      this.again = true;
      return;
    }
    this.feeding = this.feedWhileAsked().finally(() => (this.feeding = undefined));
  }

  private async feedWhileAsked(): Promise<void> {
    do {
      this.again = false;
      const free = this.concurrency - this.occupied;
      try {
        if (Date.now() - this.overdueCheckedAt > OVERDUE_CHECK_MS) {
          this.overdueCheckedAt = Date.now();
          await this.dispatch.promoteOverdue();
        }
        await this.dispatch.feed(free);
        if (this.failing) this.logger.info("feeding worker slots again");
        this.failing = false;
      } catch (error) {
        // Redis away: the tick tries again; said once per outage.
        if (!this.failing) this.logger.warn("could not feed worker slots from the accounts' lines", { error: (error as Error).message });
        this.failing = true;
        return;
      }
    } while (this.again && !this.stopped);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.tick);
    await this.feeding;
  }
}
