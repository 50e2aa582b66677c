// Internal teams' workloads that call the public gRPC API for an account named in the call
// (`x-account-id`, `x-user-id`) instead of with an API key: each is granted by the operator in
// PUBLIC_GRPC_WORKLOADS, limited to a set of accounts (or all of them) and to what it may call,
// roles (workload-roles.ts) or single methods:
//   PUBLIC_GRPC_WORKLOADS="reporting/exporter=12,15:reader;cms/sync=*:writer,publisher"
// A grant that names no role or method is a start-up error rather than a guess: read as every
// method it would keep too much, read as `reader` it would break a writing workload unnoticed
// until its first call. The workload proves who it is with its ServiceAccount token
// (workload-identity.ts); the acting user's membership and project access, the subscription and
// the rate limits are then checked as for a key.
import { ConfigError, envOptional, type Env } from "../../../services/kit/src/config.ts";
import { methodsOf, publicMethod, ROLES, type Role } from "./workload-roles.ts";

/** One grant: the accounts (or "all") and the public methods (full paths) it allows. */
export interface WorkloadGrant {
  accounts: ReadonlySet<number> | "all";
  methods: ReadonlySet<string>;
}

/** Per workload: its grants (one per entry naming it). */
export type ActingWorkloads = Map<string, WorkloadGrant[]>;

const NAME = "PUBLIC_GRPC_WORKLOADS";
const ENTRY = /^([a-z0-9][-a-z0-9]*(?:\/[a-z0-9][-.a-z0-9]*)?)=(\*|\d+(?:\s*,\s*\d+)*)(?:\s*:\s*(.*))?$/;

function methodsOfGrant(entry: string, list: string): Set<string> {
  const methods = new Set<string>();
  for (const item of list.split(",").map((m) => m.trim())) {
    const granted = (ROLES as readonly string[]).includes(item) ? methodsOf(item as Role) : [publicMethod(item)];
    if (granted[0] === undefined) throw new ConfigError(NAME, `"${item}" in "${entry}" is neither a role (${ROLES.join(", ")}) nor a method of articles.api.v1`);
    for (const method of granted) methods.add(method!);
  }
  return methods;
}

export function loadActingWorkloads(env: Env): ActingWorkloads {
  const workloads: ActingWorkloads = new Map();
  const value = envOptional(env, NAME);
  if (value === undefined) return workloads;
  for (const entry of value.split(";").map((e) => e.trim()).filter(Boolean)) {
    const match = ENTRY.exec(entry);
    if (!match) throw new ConfigError(NAME, `expected <namespace>/<service-account>=<account id>,…|*:<role or method>,…; got "${entry}"`);
    const [, workload, accounts, granted] = match;
    if (!granted?.trim()) {
      throw new ConfigError(NAME, `"${entry}" grants no role or method: add one or more of :${ROLES.join(", :")} or method names (e.g. "${entry}:reader")`);
    }
    const grants = workloads.get(workload) ?? [];
    grants.push({
      accounts: accounts === "*" ? "all" : new Set(accounts.split(",").map((id) => Number(id.trim()))),
      methods: methodsOfGrant(entry, granted),
    });
    workloads.set(workload, grants);
  }
  return workloads;
}

const covers = (grant: WorkloadGrant, accountId: number) => grant.accounts === "all" || grant.accounts.has(accountId);

/** Whether a grant of the workload naming the account allows the method (`package.Service/Method`). */
export function mayCall(workloads: ActingWorkloads, workload: string, accountId: number, method: string): boolean {
  return (workloads.get(workload) ?? []).some((grant) => covers(grant, accountId) && grant.methods.has(method));
}

/**
 * The accounts where the workload's grants allow every one of `methods`: the boundary of its call,
 * whatever else the acting user belongs to ("all" when a grant for every account allows each).
 */
export function grantedAccounts(workloads: ActingWorkloads, workload: string, methods: readonly string[]): ReadonlySet<number> | "all" {
  const grants = workloads.get(workload) ?? [];
  if (methods.every((method) => grants.some((grant) => grant.accounts === "all" && grant.methods.has(method)))) return "all";
  // Some method is granted only for named accounts: the boundary is among those.
  const named = grants.flatMap((grant) => (grant.accounts === "all" ? [] : [...grant.accounts]));
  return new Set(named.filter((accountId) => methods.every((method) => mayCall(workloads, workload, accountId, method))));
}
