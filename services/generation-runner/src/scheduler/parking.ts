// Waiting that holds nothing. A live step's call that would wait long for its provider (for its
// budget's turn, through a 429 pause, or while the model's breaker stays open) parks its article
// instead of waiting inside its job: the job is delayed, so it holds no worker slot and renews no
// lock, and a small ticket stays in this runner's memory. In its budget's line (fair-gate.ts) the
// ticket keeps its place; when its turn comes its job is woken, owed a request by the budget
// (provider-capacity.ts), and its call goes ahead of the line once it is back. With an open
// breaker (outage-waits.ts) the ticket waits
// for the probe that finds the provider back, then joins the budget's line. A parked job also
// wakes by itself after PARK_SAFETY_MS, in case the runner holding its ticket died: it then asks
// again like any call. Only calls made before anything is billed park, so resuming from the
// run's checkpoints bills nothing twice.

/** How long a call waits in its budget's line inside its job before its article is parked. */
export const PARK_AFTER_MS = 1000;
/** A parked job wakes by itself after this long if nothing woke it sooner. */
export const PARK_SAFETY_MS = 300_000;

/**
 * The outage a parked call was riding out, carried through its parks (in its job) so a wait that
 * spans them is bounded as one: since when none of its models was available (for
 * PROVIDER_OUTAGE_LIMIT_MS), and the outage errors its attempt has had (three fail the attempt).
 */
export interface OutageSoFar {
  since?: number;
  tries: number;
}

/** What a call needs to park its article's job. */
export interface Parking {
  article: string;
  /** The outage the call was riding out when it last parked, if any. */
  outage?: OutageSoFar;
  /** Delays the job for `ms` (its progress sent first), keeping the outage so far with it; never returns. */
  park(ms: number, outage?: OutageSoFar): Promise<never>;
  /** The call went through: the outage kept with the job is over. */
  outageEnded(): Promise<void>;
}

/** The call's article was parked: its job lets go of its slot. */
export class CallParked extends Error {
  override readonly name = "CallParked";
}
