// What a paced provider call is about, apart from the pacing itself (paced-call.ts): the provider
// it goes to and the article's ticket for its turn. Kept apart so outage-waits.ts, which the pacer
// uses, can name them without importing the pacer back.
import type { Parking } from "./parking.ts";
import type { ConfiguredLimits } from "./provider-capacity.ts";

export type WaitReason = "capacity" | "rate_limited" | "provider_unavailable";

/** A provider call the runner may make: its budget (and breaker) name and the operator's limits. */
export interface PacedTarget {
  id: string;
  limits: ConfiguredLimits;
}

export interface PacingTicket {
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
