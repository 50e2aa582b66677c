// The calls of one runner waiting for one budget. The turn between accounts is decided for the
// whole fleet in Redis (provider-capacity.ts: fair shares by the plans' weights): one loop per
// budget offers the shared budget the call at the head of each of its accounts' lines, and the
// budget admits the one whose account's turn it is, when it has room. Within an account the
// oldest article goes first (so articles finish in the order they were asked for, not all at the
// end). An account alone gets the whole budget; with others, a burst of one account's calls cannot
// get ahead of another account's single call, whichever replicas hold them. A call that has waited
// PARK_AFTER_MS parks its article (parking.ts) and leaves its ticket in the line in its place.
import { randomBytes } from "node:crypto";
import type { ProviderCapacity, ConfiguredLimits } from "./provider-capacity.ts";
import { CallParked, PARK_AFTER_MS, type Parking } from "./parking.ts";
import type { Ticket } from "./ticket.ts";

/** Accounts offered to the budget at each ask; with more, the offer moves round the others in turn. */
const MAX_CLAIMS = 16;

/** How a call takes its turn in the line, beside its ticket. */
export interface Turn {
  /** The call of an article woken for its turn: it goes as soon as the budget has room. */
  woken?: boolean;
  /** Told once when the call has to wait, with how long the budget asked for. */
  onWait?: (waitMs: number) => void;
}

/** An admitted call: it holds its concurrency slot (if the budget caps calls) until settled. */
export interface Admitted {
  leaseId?: string;
  waitedMs: number;
}

interface Waiter extends Turn {
  ticket: Ticket;
  enteredAt: number;
  told: boolean;
  resolve(admitted: Admitted): void;
  reject(error: unknown): void;
  /** The parked article: its turn reserves the request for it and wakes its job. */
  parked?: string;
}

/** A call of an article woken for its turn, back in its job. */
const isWokenCall = (w: Waiter) => Boolean(w.woken) && !w.parked;

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
    /** Wakes a parked article's job. */
    private readonly wake: (article: string) => Promise<void> = async () => {},
  ) {}

  get waiting(): number {
    let n = 0;
    for (const queue of this.byAccount.values()) n += queue.length;
    return n;
  }

  enter(ticket: Ticket, { woken, onWait }: Turn = {}): Promise<Admitted> {
    ticket.signal?.throwIfAborted();
    return new Promise<Admitted>((resolve, reject) => {
      const signal = ticket.signal;
      const onAbort = () => this.leave(waiter, signal!.reason);
      let parkTimer: ReturnType<typeof setTimeout> | undefined;
      const settled = () => (signal?.removeEventListener("abort", onAbort), clearTimeout(parkTimer));
      const waiter: Waiter = {
        ticket,
        woken,
        onWait,
        enteredAt: Date.now(),
        told: false,
        resolve: (admitted) => (settled(), resolve(admitted)),
        reject: (error) => (settled(), reject(error)),
      };
      this.queue(waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
      const parking = ticket.parking;
      // A woken article's call has its turn: it waits only for the budget's room, in its job.
      if (parking && !woken) {
        // Still in line after a while: the ticket keeps the place, the job lets go.
        parkTimer = setTimeout(() => {
          waiter.parked = parking.article;
          waiter.told = true;
          waiter.reject(new CallParked(`parked in the line of ${this.budget}`));
        }, PARK_AFTER_MS);
      }
    });
  }

  /** Puts a parked article's ticket in line (its job waits delayed): its turn wakes it. */
  enterParked(ticket: Ticket & { parking: Parking }): void {
    const none = () => {};
    this.queue({ ticket, enteredAt: Date.now(), told: true, resolve: none, reject: none, parked: ticket.parking.article });
  }

  private queue(waiter: Waiter): void {
    const { ticket } = waiter;
    let queue = this.byAccount.get(ticket.account);
    if (!queue) {
      this.byAccount.set(ticket.account, (queue = []));
      this.ring.push(ticket.account);
    }
    // Oldest article first; equal times keep their arrival order. A woken article's call had its
    // turn: it goes before the account's others (behind those woken before it).
    const ahead = (w: Waiter) => (waiter.woken ? isWokenCall(w) : isWokenCall(w) || w.ticket.since <= ticket.since);
    let at = queue.length;
    while (at > 0 && !ahead(queue[at - 1]!)) at--;
    queue.splice(at, 0, waiter);
    if (!this.running) void this.pump();
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
    // No call of the account waits here any more: it stops holding the fleet's turn.
    void this.capacity.leave(this.budget, account).catch(() => {});
  }

  /** A parked article's turn came: its job is woken, its call to skip the line when it comes back. */
  private async handOver(article: string): Promise<void> {
    try {
      await this.capacity.markWoken(this.budget, article);
      await this.wake(article);
    } catch {
      // Redis is away: the job wakes by itself (PARK_SAFETY_MS) and asks again.
    }
  }

  /** An admission its call will not use: its reserved tokens and its slot, if any, go back to the budget. */
  private giveBack(limits: ConfiguredLimits, waiter: Waiter, leaseId: string | undefined): void {
    void this.capacity.settle(this.budget, limits, -waiter.ticket.tokens, leaseId).catch(() => {});
  }

  /** The head of each account's line, starting from the account after the last one let through. */
  private heads(): Waiter[] {
    const n = Math.min(this.ring.length, MAX_CLAIMS);
    this.turn %= this.ring.length || 1;
    return Array.from({ length: n }, (_, i) => this.byAccount.get(this.ring[(this.turn + i) % this.ring.length]!)![0]!);
  }

  private async pump(): Promise<void> {
    this.running = true;
    try {
      while (this.ring.length > 0) {
        const heads = this.heads();
        const limits = this.limits();
        const leaseId = limits.maxConcurrentCalls ? randomBytes(8).toString("hex") : undefined;
        let admission;
        try {
          const claims = heads.map(({ ticket, parked, woken }) => ({
            account: ticket.account,
            weight: ticket.weight ?? 1,
            tokens: ticket.tokens,
            wake: parked,
            woken: !parked && woken ? ticket.parking?.article : undefined,
          }));
          admission = await this.capacity.admit(this.budget, limits, claims, leaseId ?? "");
        } catch (error) {
          // Redis is away: the calls fail like any call that cannot reach a dependency.
          for (const waiter of heads) this.leave(waiter, error);
          continue;
        }
        if (admission.admitted || admission.wake) {
          const waiter = heads[admission.index]!;
          const queue = this.byAccount.get(waiter.ticket.account);
          // A woken article's call may have gone ahead of it in its line meanwhile.
          const at = queue?.indexOf(waiter) ?? -1;
          // Left (aborted) while the budget was asked: what it was given (its tokens, and its
          // concurrency slot when the budget caps calls) goes back.
          if (at === -1) {
            if (admission.admitted) this.giveBack(limits, waiter, leaseId);
            continue;
          }
          queue!.splice(at, 1);
          this.turn = (this.ring.indexOf(waiter.ticket.account) + 1) % this.ring.length;
          this.dropIfEmpty(waiter.ticket.account);
          if (admission.wake || waiter.parked) {
            // Parked while the budget was asked as a call: the call's slot goes back, the article is woken.
            if (admission.admitted) this.giveBack(limits, waiter, leaseId);
            void this.handOver(waiter.parked!);
          } else waiter.resolve({ leaseId, waitedMs: Date.now() - waiter.enteredAt });
          continue;
        }
        for (const queue of this.byAccount.values()) {
          for (const w of queue) {
            if (w.told) continue;
            w.told = true;
            w.onWait?.(admission.waitMs);
          }
        }
        await Bun.sleep(Math.min(admission.waitMs, MAX_NAP_MS));
      }
    } finally {
      this.running = false;
    }
  }
}
