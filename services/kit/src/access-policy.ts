// Which caller may call which method: each service declares, beside its routes, the callers of
// every one of its methods (the type makes a method without an entry a compile error), and every
// call passes this check after its caller's token verifies. Deny by default: a method absent from
// the table, or a caller absent from its entry, is PERMISSION_DENIED naming both, logged and
// counted. Health answers everyone (probes carry no token); reflection answers any verified caller
// (it shows the schema, never data).
//
// The table is least privilege: the processes that handle untrusted input (the generation runner:
// model output and fetched pages; the webhook dispatcher: customer URLs) reach no operator or key
// method; the gateway cannot create keys; operator methods need the operator's credential. An
// operator grants an internal team's workload more with CALLER_GRANTS on the service.
import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextKey, type Interceptor } from "@connectrpc/connect";
import { Health } from "../../../proto/gen/grpc/health/v1/health_pb.ts";
import { ConfigError, envOptional, type Env } from "./config.ts";
import type { Logger } from "./logger.ts";
import { CounterSeries, type CounterCell } from "./metric-series.ts";
import type { CallerVerifier } from "./workload-identity.ts";

/** The stack's own callers, each with a credential of its own (a ServiceAccount on Kubernetes). */
export const CALLERS = {
  gateway: "gateway",
  accountsBilling: "accounts-billing",
  workflowCatalog: "workflow-catalog",
  articleStore: "article-store",
  generationRunner: "generation-runner",
  webhookDispatcher: "webhook-dispatcher",
  /** The operator CLI and whoever holds the operator's credential. */
  operator: "operator",
} as const;

export type StackCaller = (typeof CALLERS)[keyof typeof CALLERS];

/** Every method of a service with the callers that may call it. */
export type MethodCallers<S extends DescService> = { [M in keyof S["method"]]: readonly StackCaller[] };

export interface ServiceAccess {
  typeName: string;
  /** By the method's wire name (`CreateApiKey`): the callers allowed. */
  methods: Map<string, ReadonlySet<string>>;
}

/** A service's access table. */
export function allow<S extends DescService>(service: S, callers: MethodCallers<S>): ServiceAccess {
  const methods = new Map<string, ReadonlySet<string>>();
  for (const method of service.methods) methods.set(method.name, new Set((callers as Record<string, readonly string[]>)[method.localName] ?? []));
  return { typeName: service.typeName, methods };
}

/**
 * CALLER_GRANTS: what an operator grants callers beyond the table, as
 * `<caller>=<package.Service>/<Method>[,…][;<caller>=…]` (`Service/*` for a whole service).
 */
export function loadCallerGrants(env: Env): Map<string, Set<string>> {
  const grants = new Map<string, Set<string>>();
  const value = envOptional(env, "CALLER_GRANTS");
  if (value === undefined) return grants;
  for (const entry of value.split(";").map((e) => e.trim()).filter(Boolean)) {
    const [caller, methods] = entry.split("=").map((p) => p?.trim());
    if (!caller || !methods || !/^[a-z0-9][-a-z0-9]*(\/[a-z0-9][-.a-z0-9]*)?$/.test(caller)) throw new ConfigError("CALLER_GRANTS", `expected <caller>=<package.Service>/<Method>,…; got "${entry}"`);
    for (const method of methods.split(",").map((m) => m.trim())) {
      if (!/^[A-Za-z_][\w.]*\.[A-Z]\w*\/(\*|[A-Z]\w*)$/.test(method)) throw new ConfigError("CALLER_GRANTS", `not a method (package.Service/Method or package.Service/*): "${method}"`);
      let granted = grants.get(method);
      if (!granted) grants.set(method, (granted = new Set()));
      granted.add(caller);
    }
  }
  return grants;
}

/** The verified caller of a call, for what runs after the check (the access line). */
export const CALLER_KEY = createContextKey<string | undefined>(undefined, { description: "the verified caller" });

const refusals = new CounterSeries("rpc_server_refused_total", "Calls refused because the caller may not call the method, by caller and method.");
const refusalCells = new Map<string, CounterCell>();
const REFLECTION_PREFIX = "grpc.reflection.";

/** Counts a refused call (the callers are ServiceAccounts whose tokens verified: a bounded set). */
export function countRefusal(caller: string, method: string): void {
  const key = `${caller} ${method}`;
  let cell = refusalCells.get(key);
  if (!cell) refusalCells.set(key, (cell = refusals.cell({ caller, rpc_method: method })));
  cell.value++;
}

/**
 * The caller check of every call: the token verifies (UNAUTHENTICATED otherwise), then the
 * service's table, or the operator's grants, names the caller for the method.
 */
export function authorizeCallers(opts: { verifier: CallerVerifier; access: ServiceAccess[]; grants?: Map<string, Set<string>>; logger: Logger }): Interceptor {
  const table = new Map<string, ReadonlySet<string>>();
  for (const service of opts.access) for (const [method, callers] of service.methods) table.set(`${service.typeName}/${method}`, callers);
  const grants = opts.grants ?? new Map();
  const allowed = (caller: string, path: string, service: string) =>
    table.get(path)?.has(caller) === true || grants.get(path)?.has(caller) === true || grants.get(`${service}/*`)?.has(caller) === true;
  return (next) => async (req) => {
    const service = req.service.typeName;
    if (service === Health.typeName) return next(req);
    const caller = await opts.verifier.callerOf(req.header.get("authorization"));
    req.contextValues.set(CALLER_KEY, caller);
    const path = `${service}/${req.method.name}`;
    if (!service.startsWith(REFLECTION_PREFIX) && !allowed(caller, path, service)) {
      countRefusal(caller, path);
      opts.logger.warn("call refused", { caller, method: path });
      throw new ConnectError(`caller "${caller}" may not call ${path}`, Code.PermissionDenied);
    }
    return next(req);
  };
}
