// Articles parked on open breakers (parking.ts), in this runner: per model, the tickets of the
// calls that found every one of their models unavailable. One watcher per model with tickets asks
// the model's breaker (and takes the fleet's probe when it is due: the parked calls stay out of
// it), so a runner whose articles are all parked still notices the provider's return. When one of
// a ticket's models answers again, the ticket is released to it: into its budget's line, or its job
// woken at once when the budget is unbounded.
import { recordBreakerState } from "../../../kit/src/metrics.ts";
import type { CircuitBreakers } from "../domain/circuit-breaker.ts";
import type { PacedTarget, Ticket } from "./ticket.ts";
import type { Parking } from "./parking.ts";

/** A call parked because none of its models was available. */
export interface ParkedOnOutage {
  targets: PacedTarget[];
  ticket: Ticket & { parking: Parking };
  /** Runs the fleet's probe of a model (the breaker told of its outcome): true when it answered. */
  probe: (target: PacedTarget) => Promise<boolean>;
}

export interface OutageWaitsDeps {
  breakers: CircuitBreakers;
  /** The model answers again: the ticket goes on with it. */
  release(target: PacedTarget, parked: ParkedOnOutage): Promise<void>;
}

export class OutageWaits {
  private readonly byModel = new Map<string, Map<string, ParkedOnOutage>>();

  constructor(private readonly deps: OutageWaitsDeps) {}

  /** Tickets parked in this runner, per model (a ticket with a fallback counts under each of its models). */
  parkedByModel(): Map<string, number> {
    return new Map([...this.byModel].map(([model, tickets]) => [model, tickets.size]));
  }

  park(parked: ParkedOnOutage): void {
    for (const target of parked.targets) {
      const tickets = this.byModel.get(target.id);
      // A job that woke by itself and parked again replaces its older ticket.
      if (tickets) tickets.set(parked.ticket.parking.article, parked);
      else {
        this.byModel.set(target.id, new Map([[parked.ticket.parking.article, parked]]));
        void this.watch(target);
      }
    }
  }

  private async watch(target: PacedTarget): Promise<void> {
    const tickets = this.byModel.get(target.id)!;
    while (tickets.size > 0) {
      let retryInMs = 1000;
      try {
        const passage = await this.deps.breakers.pass(target.id);
        retryInMs = passage.retryInMs;
        const back = passage.probe ? await tickets.values().next().value!.probe(target) : passage.go;
        recordBreakerState(target.id, back ? "closed" : "open");
        if (back) this.releaseAll(target, tickets);
      } catch {
        // Redis is away: asked again after the nap.
      }
      await Bun.sleep(Math.min(Math.max(retryInMs, 250), 5000) + Math.random() * 500);
    }
    this.byModel.delete(target.id);
  }

  private releaseAll(target: PacedTarget, tickets: Map<string, ParkedOnOutage>): void {
    for (const [article, parked] of tickets) {
      // Released once, to the first of its models found back.
      for (const other of parked.targets) if (other.id !== target.id) this.byModel.get(other.id)?.delete(article);
      // A release that fails (Redis away) puts the ticket back: the watcher releases it again at its
      // next look, rather than the job waiting out its park's safety (PARK_SAFETY_MS).
      void this.deps.release(target, parked).catch(() => this.park(parked));
    }
    tickets.clear();
  }
}
