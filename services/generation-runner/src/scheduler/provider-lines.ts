// Where this runner's calls wait for their providers: each budget's line (fair-gate.ts, its turns
// decided for the fleet by provider-capacity.ts) and, while every model of a call is unavailable,
// the outage waits (outage-waits.ts). A call that waits long parks its article (parking.ts) and
// leaves its ticket in the line; a ticket released from an outage joins its budget's line, or
// wakes its article at once when the budget is unbounded. The pacer (domain/paced-call.ts) enqueues
// a call for its turn or on an outage; it sees neither a gate nor a ticket's waiting place.
import type { CircuitBreakers } from "../domain/circuit-breaker.ts";
import { FairGate, type Admitted } from "./fair-gate.ts";
import { OutageWaits, type ParkedOnOutage } from "./outage-waits.ts";
import { CallParked, PARK_SAFETY_MS, type OutageSoFar, type Parking } from "./parking.ts";
import type { ConfiguredLimits, ProviderCapacity } from "./provider-capacity.ts";
import type { PacedTarget, Ticket } from "./ticket.ts";

export type { Admitted } from "./fair-gate.ts";

/** A call asking for its turn in a bounded budget. */
export interface CallInLine {
  reason: "capacity";
  target: PacedTarget;
  ticket: Ticket;
  /** The outage the call rode out so far, kept with its article if it parks. */
  outage?: OutageSoFar;
  /** Told once when the call has to wait. */
  onWait: () => void;
}

/** A call none of whose models answers: it waits for a probe to find one back. */
export interface CallOnOutage {
  reason: "provider_unavailable";
  targets: PacedTarget[];
  ticket: Ticket & { parking: Parking };
  outage?: OutageSoFar;
  /** The fleet's probe of a model for the parked calls: true when it answered. */
  probe: ParkedOnOutage["probe"];
}

/** What a paced call needs of the scheduler: its lines and the budgets it spends. */
export interface CallScheduling {
  readonly budgets: ProviderCapacity;
  enqueue(entry: CallInLine): Promise<Admitted>;
  enqueue(entry: CallOnOutage): Promise<never>;
  enqueue(entry: CallInLine | CallOnOutage): Promise<Admitted>;
  waitingCalls(): Map<string, number>;
}

export class ProviderLines implements CallScheduling {
  private readonly gates = new Map<string, FairGate>();
  private readonly limits = new Map<string, ConfiguredLimits>();
  private readonly outages: OutageWaits;

  constructor(
    readonly budgets: ProviderCapacity,
    breakers: CircuitBreakers,
    /** Wakes a parked article's job (its turn came, or its provider is back). */
    private readonly wake: (article: string) => Promise<void> = async () => {},
  ) {
    this.outages = new OutageWaits({ breakers, release: (target, parked) => this.released(target, parked) });
  }

  /**
   * "capacity": the call's turn in a bounded budget, its place in the budget's line (parking the
   * article when it waits long: never returns then), or, for an article woken because its turn
   * came, the budget's next room. "provider_unavailable": its ticket waits for a probe to find one
   * of its models back, and its article parks (never returns).
   */
  enqueue(entry: CallInLine): Promise<Admitted>;
  enqueue(entry: CallOnOutage): Promise<never>;
  enqueue(entry: CallInLine | CallOnOutage): Promise<Admitted>;
  async enqueue(entry: CallInLine | CallOnOutage): Promise<Admitted> {
    if (entry.reason === "provider_unavailable") {
      const { targets, ticket, outage, probe } = entry;
      // The breaker's watcher wakes the article when a probe finds one of its models back.
      this.outages.park({ targets, ticket: { ...ticket, signal: undefined, onWait: undefined }, probe });
      return ticket.parking.park(PARK_SAFETY_MS, outage);
    }
    const { target, ticket, outage, onWait } = entry;
    const { parking } = ticket;
    const woken = parking ? await this.budgets.takeWoken(target.id, parking.article) : false;
    try {
      return await this.gate(target).enter(ticket, { woken, onWait });
    } catch (error) {
      if (error instanceof CallParked) return await parking!.park(PARK_SAFETY_MS, outage);
      throw error;
    }
  }

  /** Calls waiting in this runner, per budget: in its line (parked or not) or on its open breaker. */
  waitingCalls(): Map<string, number> {
    const waiting = new Map([...this.gates].map(([id, gate]) => [id, gate.waiting]));
    for (const [model, parked] of this.outages.parkedByModel()) waiting.set(model, (waiting.get(model) ?? 0) + parked);
    return waiting;
  }

  private gate(target: PacedTarget): FairGate {
    this.limits.set(target.id, target.limits);
    let gate = this.gates.get(target.id);
    if (!gate) this.gates.set(target.id, (gate = new FairGate(this.budgets, target.id, () => this.limits.get(target.id)!, this.wake)));
    return gate;
  }

  /** A parked article's model answers again: it joins the budget's line, or wakes at once when the budget is unbounded. */
  private async released(target: PacedTarget, parked: ParkedOnOutage): Promise<void> {
    const { ticket } = parked;
    if (await this.budgets.isUnbounded(target.id, target.limits)) return this.wake(ticket.parking.article);
    this.gate(target).enterParked({ account: ticket.account, weight: ticket.weight, since: ticket.since, tokens: ticket.tokens, parking: ticket.parking });
  }
}
