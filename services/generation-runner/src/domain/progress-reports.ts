// What a run reports to the article while it works (status, current step, model, cost so far).
// The reports are for pollers only, so the run does not wait for them: they are sent one at a
// time, in order, at most one per interval (the first one interval after the run began), and a
// report made while another is under way or waiting replaces the one not yet sent. So a run whose
// steps take seconds reports each step, and one whose steps finish in milliseconds reports only
// its latest state now and then, or nothing before completion records its final state. A report
// that failed makes the run's next report (or its flush) throw, as if the run had made it itself.
// With a keep-alive, a run that reported nothing for that long sends its latest report again, so
// the article's last change stays recent while a long step runs and article-store's reconciler
// never takes it for a stranded one (even when its queue job is gone).

/** How often one run's reports reach article-store at most (pollers see a state at most this late). */
export const PROGRESS_INTERVAL_MS = 250;

export interface ProgressReport {
  status: "writing" | "batching" | "polishing";
  currentStep: string;
  aiModelUsed?: string;
  cost: string;
}

export type SendProgress = (report: ProgressReport) => Promise<unknown>;

export class ProgressReports {
  private pending: ProgressReport | undefined;
  /** The pending report only repeats the latest one to show the run alive: its failure is not the run's. */
  private pendingIsKeepAlive = false;
  /** The latest report made, repeated by the keep-alive; cleared once completion supersedes it. */
  private latest: ProgressReport | undefined;
  private sending: Promise<void> | undefined;
  private failure: unknown;
  private lastSentAt = performance.now();
  /** Set while someone waits for the reports: the interval no longer holds the next one back. */
  private urgent = false;
  private wake: (() => void) | undefined;
  private keepAliveTimer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly send: SendProgress,
    private readonly intervalMs = PROGRESS_INTERVAL_MS,
    /** Repeat the latest report when nothing was sent for this long (undefined: never). */
    private readonly keepAliveMs?: number,
  ) {
    if (keepAliveMs !== undefined && keepAliveMs > 0) {
      this.keepAliveTimer = setInterval(() => this.keepAlive(), Math.max(1, Math.floor(keepAliveMs / 2)));
      this.keepAliveTimer.unref?.();
    }
  }

  /** Queues the report (replacing any not yet sent) and returns at once. */
  report(report: ProgressReport): void {
    this.throwIfFailed();
    this.pending = report;
    this.pendingIsKeepAlive = false;
    this.latest = report;
    this.sending ??= this.drain();
  }

  /** Sends what is queued now and waits until every report made so far is in; throws the first that failed. */
  async flush(): Promise<void> {
    this.urgent = true;
    this.wake?.();
    try {
      while (this.sending) await this.sending;
    } finally {
      this.urgent = false;
    }
    this.throwIfFailed();
  }

  /**
   * Drops the report not yet sent and waits for the one under way: for when the run's next call
   * to article-store (completion) records a later state itself, so a report landing after it
   * would only repeat or undo it.
   */
  async supersede(): Promise<void> {
    this.pending = undefined;
    this.stopKeepAlive();
    await this.flush();
  }

  /** The run is over (finished, failed or parked): nothing more is sent for it. */
  stop(): void {
    this.pending = undefined;
    this.stopKeepAlive();
    this.wake?.();
  }

  private stopKeepAlive(): void {
    clearInterval(this.keepAliveTimer);
    this.keepAliveTimer = undefined;
    this.latest = undefined;
  }

  private keepAlive(): void {
    // Anything queued or under way shows the run alive by itself.
    if (!this.latest || this.sending || this.failure !== undefined) return;
    if (performance.now() - this.lastSentAt < this.keepAliveMs!) return;
    this.pending = this.latest;
    this.pendingIsKeepAlive = true;
    this.sending = this.drain();
  }

  private throwIfFailed(): void {
    if (this.failure !== undefined) throw this.failure;
  }

  private async drain(): Promise<void> {
    // Yields first, so `sending` is always set before this can finish.
    await Promise.resolve();
    while (this.pending) {
      const wait = this.lastSentAt + this.intervalMs - performance.now();
      if (wait > 0 && !this.urgent) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, wait);
          this.wake = () => (clearTimeout(timer), resolve());
        });
        this.wake = undefined;
        continue;
      }
      const next = this.pending;
      const keepAlive = this.pendingIsKeepAlive;
      this.pending = undefined;
      this.lastSentAt = performance.now();
      try {
        await this.send(next);
      } catch (error) {
        // A missed keep-alive is tried again at the next one; the run goes on.
        if (keepAlive) continue;
        this.failure ??= error;
        this.pending = undefined;
      }
    }
    this.sending = undefined;
  }
}
