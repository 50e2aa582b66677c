// The one ticket of the scheduler: an article's provider call waiting for its turn, whether in a
// budget's line (fair-gate.ts), parked there (parking.ts) or through an outage (outage-waits.ts),
// and the provider it goes to. The pacer (domain/paced-call.ts) makes it; the lines never copy it
// into a ticket of their own.
import type { Parking } from "./parking.ts";
import type { ConfiguredLimits } from "./provider-capacity.ts";

export type WaitReason = "capacity" | "rate_limited" | "provider_unavailable";

/** A provider call the runner may make: its budget (and breaker) name and the operator's limits. */
export interface PacedTarget {
  id: string;
  limits: ConfiguredLimits;
}

export interface Ticket {
  account: string;
  /** The account's weight in the fair shares between accounts (1 when unset). */
  weight?: number;
  since: number;
  /** Estimated tokens of the call. */
  tokens: number;
  signal?: AbortSignal;
  /** Told when the call starts waiting, once per reason. */
  onWait?: (reason: WaitReason, target: string) => void;
  /** Given: a long wait parks the article's job instead of holding it (parking.ts). */
  parking?: Parking;
}
