// The calls of one runner waiting for one budget, let through in turn by account: round-robin
// over the accounts with a call waiting, and within an account the oldest article first (so
// articles finish in the order they were asked for, not all at the end). One loop per budget asks
// the shared budget (provider-capacity.ts) for each admission in that order; while the budget
// says wait, the loop waits, so a burst of one account's calls cannot get ahead of another
// account's single call by more than one turn.
import { randomBytes } from "node:crypto";
import type { ProviderCapacity, ConfiguredLimits } from "./provider-capacity.ts";

export interface CallTicket {
  /** Whose turn it is: the account the article belongs to. */
  account: string;
  /** Orders an account's calls: the article's creation time. */
  since: number;
  /** The call's estimated tokens, reserved from the budget. */
  tokens: number;
  signal?: AbortSignal;
  /** Told once when the call has to wait, with how long the budget asked for. */
  onWait?: (waitMs: number) => void;
}

/** An admitted call: it holds its concurrency slot (if the budget caps calls) until settled. */
export interface Admitted {
  leaseId?: string;
  waitedMs: number;
}

interface Waiter {
  ticket: CallTicket;
  enteredAt: number;
  told: boolean;
  resolve(admitted: Admitted): void;
  reject(error: unknown): void;
}

/** How long the loop sleeps at most before asking again (a pause may be lifted, a slot freed). */
const MAX_NAP_MS = 1000;

export class FairGate {
  private readonly byAccount = new Map<string, Waiter[]>();
  private ring: string[] = [];
  private turn = 0;
  private running = false;

  constructor(
    private readonly capacity: ProviderCapacity,
    private readonly budget: string,
    private readonly limits: () => ConfiguredLimits,
  ) {}

  get waiting(): number {
    let n = 0;
    for (const queue of this.byAccount.values()) n += queue.length;
    return n;
  }

  enter(ticket: CallTicket): Promise<Admitted> {
    ticket.signal?.throwIfAborted();
    return new Promise<Admitted>((resolve, reject) => {
      const signal = ticket.signal;
      const onAbort = () => this.leave(waiter, signal!.reason);
      const waiter: Waiter = {
        ticket,
        enteredAt: Date.now(),
        told: false,
        resolve: (admitted) => (signal?.removeEventListener("abort", onAbort), resolve(admitted)),
        reject: (error) => (signal?.removeEventListener("abort", onAbort), reject(error)),
      };
      let queue = this.byAccount.get(ticket.account);
      if (!queue) {
        this.byAccount.set(ticket.account, (queue = []));
        this.ring.push(ticket.account);
      }
      // Oldest article first; equal times keep their arrival order.
      let at = queue.length;
      while (at > 0 && queue[at - 1]!.ticket.since > ticket.since) at--;
      queue.splice(at, 0, waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
      if (!this.running) void this.pump();
    });
  }

  private leave(waiter: Waiter, reason: unknown): void {
    const queue = this.byAccount.get(waiter.ticket.account);
    const at = queue?.indexOf(waiter) ?? -1;
    if (at === -1) return;
    queue!.splice(at, 1);
    this.dropIfEmpty(waiter.ticket.account);
    waiter.reject(reason);
  }

  private dropIfEmpty(account: string): void {
    if ((this.byAccount.get(account)?.length ?? 0) > 0) return;
    this.byAccount.delete(account);
    const at = this.ring.indexOf(account);
    this.ring.splice(at, 1);
    if (at < this.turn) this.turn--;
  }

  private next(): Waiter | undefined {
    if (this.ring.length === 0) return undefined;
    this.turn %= this.ring.length;
    return this.byAccount.get(this.ring[this.turn]!)![0];
  }

  private async pump(): Promise<void> {
    this.running = true;
    try {
      for (let waiter = this.next(); waiter; waiter = this.next()) {
        const limits = this.limits();
        const leaseId = limits.maxConcurrentCalls ? randomBytes(8).toString("hex") : undefined;
        let admission;
        try {
          admission = await this.capacity.admit(this.budget, limits, waiter.ticket.tokens, leaseId ?? "");
        } catch (error) {
          // Redis is away: the call fails like any call that cannot reach a dependency.
          this.leave(waiter, error);
          continue;
        }
        if (admission.admitted) {
          const queue = this.byAccount.get(waiter.ticket.account);
          // Left (aborted) while the budget was asked: the slot it was given goes unused until settled.
          if (queue?.[0] !== waiter) {
            if (leaseId) void this.capacity.settle(this.budget, limits, -waiter.ticket.tokens, leaseId).catch(() => {});
            continue;
          }
          queue.shift();
          this.dropIfEmpty(waiter.ticket.account);
          this.turn++;
          waiter.resolve({ leaseId, waitedMs: Date.now() - waiter.enteredAt });
          continue;
        }
        for (const queue of this.byAccount.values()) {
          for (const w of queue) {
            if (w.told) continue;
            w.told = true;
            w.ticket.onWait?.(admission.waitMs);
          }
        }
        await Bun.sleep(Math.min(admission.waitMs, MAX_NAP_MS));
      }
    } finally {
      this.running = false;
    }
  }
}
