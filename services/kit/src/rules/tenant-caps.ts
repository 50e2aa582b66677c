// The per-plan caps on what one tenant may hold at once (accounts_billing.v1.TenantCaps): their
// names as the API, the plans and the operator CLI spell them, and their range. accounts-billing
// decides the value in force (the plan's own, else the deployment's default, CAP_* settings);
// each is enforced by whoever holds the lock over what it counts: workflow-catalog (steps,
// prompts, workflows), webhook-dispatcher (destinations), the gateway (open event streams).

export const TENANT_CAPS = ["steps_per_workflow", "prompt_characters", "workflows_per_project", "destinations_per_project", "open_event_streams"] as const;
export type TenantCapName = (typeof TENANT_CAPS)[number];
export type TenantCapValues = Record<TenantCapName, number>;

/** A plan's own cap, and a default, is a whole number in this range. */
export const TENANT_CAP_MIN = 1;
export const TENANT_CAP_MAX = 1_000_000;

export const isTenantCapName = (name: string): name is TenantCapName => (TENANT_CAPS as readonly string[]).includes(name);
