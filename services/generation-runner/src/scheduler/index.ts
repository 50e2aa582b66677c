// The runner's scheduler, and the only door the rest of the runner uses
// (test/unit/import-boundaries.test.ts holds it to that): one Scheduler with four verbs (enqueue,
// park, wake, release; scheduler.ts says what each line is), and the words its callers speak.
export type { PacedTarget, Ticket, WaitReason } from "./ticket.ts";
export type { OutageSoFar, Parking } from "./parking.ts";
export type { CallScheduling } from "./provider-lines.ts";
export { Scheduler } from "./scheduler.ts";
export { NO_LIMITS, type BudgetState, type ConfiguredLimits } from "./provider-capacity.ts";
