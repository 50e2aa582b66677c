// The runner's scheduler: every way an article waits for its turn, and the only door the rest of
// the runner uses (test/unit/import-boundaries.test.ts holds it to that).
//
// - Worker slots: the accounts' lines of the fleet (kit/src/fair-dispatch.ts, which article-store's
//   relay enqueues through), fed into this runner's free slots by the SlotFeeder.
// - Plans' shares: an account's weight in every turn and its optional cap on articles in flight
//   (AccountShares).
// - Provider budgets: the fleet's requests and tokens per minute of each model, turns taken by the
//   accounts' weights (ProviderCapacity), and this runner's calls waiting for their turn or, while
//   every model of a call is unavailable, for the provider's return (ProviderLines).
//
// One ticket (ticket.ts) describes a waiting call wherever it waits; one park (the job delayed,
// holding nothing) and one wake serve every line (job-parking.ts); one fair-queuing rule
// (kit/src/lua/fair-queuing.lua) orders the slot lines and the budgets alike.
export type { PacedTarget, Ticket, WaitReason } from "./ticket.ts";
export type { OutageSoFar, Parking } from "./parking.ts";
export { ParkedJobs, wakeJob } from "./job-parking.ts";
export { SlotFeeder } from "./slot-feeder.ts";
export { AccountShares, PARK_MS } from "./account-shares.ts";
export { NO_LIMITS, ProviderCapacity, type BudgetState, type ConfiguredLimits } from "./provider-capacity.ts";
export { ProviderLines } from "./provider-lines.ts";
