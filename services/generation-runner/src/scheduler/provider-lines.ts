// Where this runner's calls wait for their providers: each budget's line (fair-gate.ts, its turns
// decided for the fleet by provider-capacity.ts) and, while every model of a call is unavailable,
// the outage waits (outage-waits.ts). A call that waits long parks its article (parking.ts) and
// leaves its ticket in the line; a ticket released from an outage joins its budget's line, or
// wakes its article at once when the budget is unbounded. The pacer (domain/paced-call.ts) asks for
// a call's turn and parks a call on an outage; it sees neither a gate nor a ticket's waiting place.
import type { CircuitBreakers } from "../domain/circuit-breaker.ts";
import { FairGate, type Admitted } from "./fair-gate.ts";
import { OutageWaits, type ParkedOnOutage } from "./outage-waits.ts";
import { CallParked, PARK_SAFETY_MS, type OutageSoFar, type Parking } from "./parking.ts";
import type { ConfiguredLimits, ProviderCapacity } from "./provider-capacity.ts";
import type { PacedTarget, Ticket } from "./ticket.ts";

export type { Admitted } from "./fair-gate.ts";

export class ProviderLines {
  private readonly gates = new Map<string, FairGate>();
  private readonly limits = new Map<string, ConfiguredLimits>();
  private readonly outages: OutageWaits;

  constructor(
    private readonly capacity: ProviderCapacity,
    breakers: CircuitBreakers,
    /** Runs the fleet's probe of a model for the calls parked on it: true when it answered. */
    probe: (target: PacedTarget, parked: ParkedOnOutage) => Promise<boolean>,
    /** Wakes a parked article's job (its turn came, or its provider is back). */
    private readonly wake: (article: string) => Promise<void> = async () => {},
  ) {
    this.outages = new OutageWaits({ breakers, probe, release: (target, parked) => this.released(target, parked) });
  }

  /**
   * The call's turn in a bounded budget: its place in the budget's line (parking the article when
   * it waits long: never returns then), or, for an article woken because its turn came, the
   * budget's next room. `onWait` is told once when the call has to wait.
   */
  async turn(target: PacedTarget, ticket: Ticket, outage: OutageSoFar | undefined, onWait: () => void): Promise<Admitted> {
    const { parking } = ticket;
    const woken = parking ? await this.capacity.takeWoken(target.id, parking.article) : false;
    try {
      return await this.gate(target).enter(ticket, { woken, onWait });
    } catch (error) {
      if (error instanceof CallParked) return await parking!.park(PARK_SAFETY_MS, outage);
      throw error;
    }
  }

  /**
   * None of the call's models answers: its ticket waits for a probe to find one back, and its
   * article parks (never returns).
   */
  async parkOnOutage(targets: PacedTarget[], ticket: Ticket & { parking: Parking }, outage: OutageSoFar | undefined, probe: ParkedOnOutage["probe"], timeoutMs: number): Promise<never> {
    // The breaker's watcher wakes the article when a probe finds one of its models back.
    this.outages.park({ targets, ticket: { ...ticket, signal: undefined, onWait: undefined }, probe, timeoutMs });
    return ticket.parking.park(PARK_SAFETY_MS, outage);
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
    if (!gate) this.gates.set(target.id, (gate = new FairGate(this.capacity, target.id, () => this.limits.get(target.id)!, this.wake)));
    return gate;
  }

  /** A parked article's model answers again: it joins the budget's line, or wakes at once when the budget is unbounded. */
  private async released(target: PacedTarget, parked: ParkedOnOutage): Promise<void> {
    const { ticket } = parked;
    if (await this.capacity.isUnbounded(target.id, target.limits)) return this.wake(ticket.parking.article);
    this.gate(target).enterParked({ account: ticket.account, weight: ticket.weight, since: ticket.since, tokens: ticket.tokens, parking: ticket.parking });
  }
}
