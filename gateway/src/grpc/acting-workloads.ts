// Internal teams' workloads that call the public gRPC API for an account named in the call
// (`x-account-id`, `x-user-id`) instead of with an API key: each is granted by the operator in
// PUBLIC_GRPC_WORKLOADS, limited to a set of accounts or all of them:
//   PUBLIC_GRPC_WORKLOADS="reporting/exporter=12,15;cms/sync=*"
// The workload proves who it is with its ServiceAccount token (workload-identity.ts); the acting
// user's project access, the subscription and the rate limits are then checked as for a key.
import { ConfigError, envOptional, type Env } from "../../../services/kit/src/config.ts";

/** Per workload: the accounts it may act for, or "all". */
export type ActingWorkloads = Map<string, ReadonlySet<number> | "all">;

export function loadActingWorkloads(env: Env): ActingWorkloads {
  const workloads: ActingWorkloads = new Map();
  const value = envOptional(env, "PUBLIC_GRPC_WORKLOADS");
  if (value === undefined) return workloads;
  for (const entry of value.split(";").map((e) => e.trim()).filter(Boolean)) {
    const match = /^([a-z0-9][-a-z0-9]*(?:\/[a-z0-9][-.a-z0-9]*)?)=(\*|\d+(?:\s*,\s*\d+)*)$/.exec(entry);
    if (!match) throw new ConfigError("PUBLIC_GRPC_WORKLOADS", `expected <namespace>/<service-account>=<account id>,… or =*; got "${entry}"`);
    workloads.set(match[1], match[2] === "*" ? "all" : new Set(match[2].split(",").map((id) => Number(id.trim()))));
  }
  return workloads;
}

/** Whether the workload may act for the account. */
export function mayActFor(workloads: ActingWorkloads, workload: string, accountId: number): boolean {
  const accounts = workloads.get(workload);
  return accounts === "all" || accounts?.has(accountId) === true;
}
