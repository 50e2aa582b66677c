// What a run writes to its article's event log (services/kit/src/article-events.ts) for live
// watchers: state changes, each step started and finished, research sources kept, images made.
// Writes go out one at a time in order without holding the run up, and the events made while one
// is under way (or in the same turn, as a step's end and the next one's start are) go out
// together in the next; `flush` waits for them (half a second each at most). A write the log
// refuses (a cluster between masters) is tried again behind the caller's back until it lands
// (kit/src/ordered-log-writes.ts). The article's end is logged by article-store, another process
// whose writes this one's queue does not order: a run waits with `landed` before that call, so
// no step of its log lands after the final event a replay stops at.
import type { RedisConnection } from "../../../kit/src/redis.ts";
import { tryAppendArticleEvents, type ArticleEvent } from "../../../kit/src/article-events.ts";
import { logWritesOf } from "../../../kit/src/ordered-log-writes.ts";
import type { Logger } from "../../../kit/src/logger.ts";
import type { StepCheckpoint, StoredImage } from "./checkpoints.ts";
import { formatUsd, type Picodollars } from "../../../kit/src/rules/usd.ts";

export interface ArticleEventLog {
  redis: RedisConnection;
  redisPrefix: string;
}

const usd = (cost: Picodollars) => formatUsd(cost);

export class RunEvents {
  /** Made and not yet sent. */
  private unsent: ArticleEvent[] = [];
  /** Set while events are being sent; resolves once every event made so far is in (or left to the retries). */
  private sending: Promise<void> | undefined;
  private lastState = "";

  constructor(
    private readonly log: ArticleEventLog | undefined,
    private readonly externalId: string,
    private readonly logger: Logger,
  ) {}

  /** A state change (repeats of the same status and step are dropped). */
  state(status: string, currentStep: string | null, cost: Picodollars): void {
    const key = `${status}\u0000${currentStep ?? ""}`;
    if (key === this.lastState) return;
    this.lastState = key;
    this.write({ event: "state", data: { status, current_step: currentStep, cost: usd(cost) } });
  }

  stepStarted(step: { stepNumber: number; stepName: string }, model: string): void {
    this.write({ event: "step_started", data: { step: step.stepNumber, name: step.stepName, model } });
  }

  stepFinished(checkpoint: StepCheckpoint, costSoFar: Picodollars, durationMs: number): void {
    this.write({
      event: "step_finished",
      data: {
        step: checkpoint.stepNumber,
        name: checkpoint.stepName,
        model: checkpoint.model,
        used_fallback: checkpoint.usedFallback,
        prompt_tokens: checkpoint.promptTokens,
        completion_tokens: checkpoint.completionTokens,
        cost: usd(checkpoint.cost),
        cost_so_far: usd(costSoFar),
        duration_ms: Math.round(durationMs),
        waited_ms: Math.round(checkpoint.waitedMs),
      },
    });
  }

  /** A step held up by its provider: its turn in the budget, a 429's pause, or an outage (once per reason and step). */
  waiting(step: string, reason: string, model: string): void {
    this.write({ event: "waiting", data: { step, reason, model } });
  }

  source(source: { index: number; title: string; url: string; siteName?: string; wordCount: number }): void {
    this.write({ event: "source", data: { position: source.index, title: source.title, url: source.url, site_name: source.siteName ?? null, word_count: source.wordCount } });
  }

  image(image: StoredImage, url: string): void {
    this.write({ event: "image", data: { position: image.position, url, width: image.width, height: image.height } });
  }

  /** Waits until every event written so far is in the log, or being tried again after half a second. */
  flush(): Promise<void> {
    return this.sending ?? Promise.resolve();
  }

  /**
   * Waits until every event written so far has landed in the log (or been given up after the
   * retries' window): normally at once, during a cluster's failover until it takes writes again.
   */
  async landed(): Promise<void> {
    await this.flush();
    if (this.log) await logWritesOf(this.log.redis).settled(this.externalId);
  }

  private write(event: ArticleEvent): void {
    const log = this.log;
    if (!log) return;
    this.unsent.push(event);
    this.sending ??= this.send(log);
  }

  private async send(log: ArticleEventLog): Promise<void> {
    // Yields first, so the events the run makes in this turn go out with this one.
    await Promise.resolve();
    while (this.unsent.length > 0) {
      const events = this.unsent;
      this.unsent = [];
      await tryAppendArticleEvents(log.redis, log.redisPrefix, this.externalId, events, (error) =>
        this.logger.warn("could not log article events", { externalId: this.externalId, events: events.map((e) => e.event), error: error.message }),
      );
    }
    this.sending = undefined;
  }
}
