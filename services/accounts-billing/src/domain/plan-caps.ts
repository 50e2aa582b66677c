// A plan's caps on what a tenant may hold (kit/src/rules/tenant-caps.ts): the plan's own values,
// kept in nullable columns where null means the deployment's default, and the caps in force, which
// this service alone decides: every other process takes them from its answers (AuthenticateKey's
// plan for the gateway, GetProject for webhook-dispatcher).
import type { FieldErrors } from "../../../kit/src/errors.ts";
import { TENANT_CAP_MAX, TENANT_CAP_MIN, TENANT_CAPS, type TenantCapName, type TenantCapValues } from "../../../kit/src/rules/tenant-caps.ts";
import type { plans } from "../db/schema.ts";

type PlanColumns = typeof plans.$inferSelect;

/** The plan column of each cap. */
const COLUMN = {
  steps_per_workflow: "stepsPerWorkflow",
  prompt_characters: "promptCharacters",
  workflows_per_project: "workflowsPerProject",
  destinations_per_project: "destinationsPerProject",
  open_event_streams: "openEventStreams",
} as const satisfies Record<TenantCapName, keyof PlanColumns>;

/** Caps a plan sets itself; null returns one to the default (on update). */
export type OwnCaps = Partial<Record<TenantCapName, number | null>>;

/** A value that is set must be a whole number in the caps' range. */
export function checkOwnCaps(caps: OwnCaps, fields: FieldErrors): void {
  for (const [name, value] of Object.entries(caps)) {
    if (value !== undefined && value !== null && (!Number.isInteger(value) || value < TENANT_CAP_MIN || value > TENANT_CAP_MAX)) {
      fields[name] = [`${name} must be a whole number from ${TENANT_CAP_MIN} to ${TENANT_CAP_MAX.toLocaleString("en-US")}.`];
    }
  }
}

/** The plan columns a change of caps writes (null: back to the default; unset caps untouched). */
export function capColumns(caps: OwnCaps): Partial<Record<(typeof COLUMN)[TenantCapName], number | null>> {
  return Object.fromEntries(
    TENANT_CAPS.filter((name) => caps[name] !== undefined).map((name) => [COLUMN[name], caps[name]!]),
  );
}

/** The caps the plan sets itself. */
export function ownCapsOf(plan: PlanColumns): Partial<TenantCapValues> {
  return Object.fromEntries(TENANT_CAPS.filter((name) => plan[COLUMN[name]] !== null).map((name) => [name, plan[COLUMN[name]]!]));
}

/** The caps in force: the plan's own where set, else the defaults (all of them without a plan). */
export function capsInForce(plan: PlanColumns | null, defaults: TenantCapValues): TenantCapValues {
  return { ...defaults, ...(plan ? ownCapsOf(plan) : {}) };
}
