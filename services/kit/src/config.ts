// Environment configuration with validated defaults: the settings every process shares. The
// readers of single variables live in env.ts and are re-exported here for the processes' configs.
import { ConfigError, envInt, envPort, envString, envUrl, type Env } from "./env.ts";
import { REDIS_URL_SCHEMES } from "./redis.ts";
import { placeholderIn } from "./secret-strength.ts";
import { TENANT_CAP_MAX, TENANT_CAP_MIN, type TenantCapValues } from "./rules/tenant-caps.ts";
import { loadIdentitySettings, type IdentitySettings } from "./workload-identity.ts";

export { ConfigError, envBool, envInt, envIntList, envOptional, envPort, envString, envUrl, failOnConfigError, redactUrl, type Env } from "./env.ts";

/** Settings every service process shares. */
export interface PlatformConfig {
  databaseUrl: string;
  /** DATABASE_POOL_SIZE: the most Postgres connections one process holds (replicas × services × this must fit max_connections). */
  databasePoolSize: number;
  redisUrl: string;
  redisPrefix: string;
  /** How this process proves who it is and checks who calls it (workload-identity.ts). */
  identity: IdentitySettings;
  services: ServiceUrls;
}

export interface ServiceUrls {
  accountsBilling: string;
  workflowCatalog: string;
  articleStore: string;
  generationRunner: string;
  webhookDispatcher: string;
}

export const DEFAULT_SERVICE_PORTS = {
  accountsBilling: 7101,
  workflowCatalog: 7102,
  articleStore: 7103,
  generationRunner: 7104,
  webhookDispatcher: 7105,
} as const;

export const SERVICE_URL_VARIABLES: Record<keyof ServiceUrls, string> = {
  accountsBilling: "ACCOUNTS_BILLING_URL",
  workflowCatalog: "WORKFLOW_CATALOG_URL",
  articleStore: "ARTICLE_STORE_URL",
  generationRunner: "GENERATION_RUNNER_URL",
  webhookDispatcher: "WEBHOOK_DISPATCHER_URL",
};

export function loadServiceUrls(env: Env): ServiceUrls {
  const urls = {} as ServiceUrls;
  for (const key of Object.keys(SERVICE_URL_VARIABLES) as (keyof ServiceUrls)[]) {
    urls[key] = envUrl(env, SERVICE_URL_VARIABLES[key], `http://127.0.0.1:${DEFAULT_SERVICE_PORTS[key]}`, ["http:", "https:"]);
  }
  return urls;
}

/** Where the stack's Postgres and Redis are (DATABASE_URL, REDIS_URL, REDIS_PREFIX). */
export function loadDataStores(env: Env = process.env): Pick<PlatformConfig, "databaseUrl" | "redisUrl" | "redisPrefix"> {
  const redisPrefix = envString(env, "REDIS_PREFIX", "articles");
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(redisPrefix)) {
    throw new ConfigError("REDIS_PREFIX", "use 1 to 64 letters, digits, dots, dashes or underscores");
  }
  const databaseUrl = envUrl(env, "DATABASE_URL", "postgres://postgres@127.0.0.1:5432/articles", ["postgres:", "postgresql:"]);
  // The manifests' Secret ships a placeholder password: an unedited one must not start anything.
  const password = decodeURIComponent(new URL(databaseUrl).password);
  const placeholder = password ? placeholderIn(password) : undefined;
  if (placeholder !== undefined) throw new ConfigError("DATABASE_URL", "its password is a placeholder; set the database's real password");
  return { databaseUrl, redisUrl: envUrl(env, "REDIS_URL", "redis://127.0.0.1:6379", REDIS_URL_SCHEMES), redisPrefix };
}

export function loadPlatformConfig(env: Env = process.env): PlatformConfig {
  return {
    ...loadDataStores(env),
    databasePoolSize: envInt(env, "DATABASE_POOL_SIZE", 10, { min: 1, max: 100 }),
    identity: loadIdentitySettings(env),
    services: loadServiceUrls(env),
  };
}

/**
 * The reconciler's sweep (article-store) and how stale an unfinished article must be before it
 * looks at it. The runner reads the bound too: a run in flight touches its article well within it.
 */
export interface ReconcileSettings {
  /** RECONCILE_INTERVAL_MS: time between two sweeps. */
  intervalMs: number;
  /** RECONCILE_STALE_AFTER_MS: an article unchanged for this long and without a live job is taken up again. */
  staleAfterMs: number;
}

export function loadReconcileSettings(env: Env = process.env): ReconcileSettings {
  return {
    intervalMs: envInt(env, "RECONCILE_INTERVAL_MS", 60_000, { min: 500, max: 86_400_000 }),
    staleAfterMs: envInt(env, "RECONCILE_STALE_AFTER_MS", 300_000, { min: 1000, max: 7 * 86_400_000 }),
  };
}

/**
 * What a plan that sets no cap of its own allows (accounts-billing reads them; every other process
 * gets the value in force from it). The variables are spelled out so the settings check finds them.
 */
export function loadTenantCapDefaults(env: Env = process.env): TenantCapValues {
  const range = { min: TENANT_CAP_MIN, max: TENANT_CAP_MAX };
  return {
    steps_per_workflow: envInt(env, "CAP_STEPS_PER_WORKFLOW", 25, range),
    prompt_characters: envInt(env, "CAP_PROMPT_CHARACTERS", 20_000, range),
    workflows_per_project: envInt(env, "CAP_WORKFLOWS_PER_PROJECT", 50, range),
    destinations_per_project: envInt(env, "CAP_DESTINATIONS_PER_PROJECT", 10, range),
    open_event_streams: envInt(env, "CAP_OPEN_EVENT_STREAMS", 20, range),
  };
}

/** How far above its Connect port a service's gRPC port is, unless GRPC_PORT says otherwise. */
export const GRPC_PORT_OFFSET = 100;

/**
 * The ports a service listens on: Connect over HTTP/1.1 for the project's own processes on
 * CONNECT_PORT, else the port of its own URL; gRPC over HTTP/2 for outside clients and probes on
 * GRPC_PORT, else that port plus GRPC_PORT_OFFSET (7101 and 7201 for accounts-billing).
 */
export function listenPorts(env: Env, ownUrl: string): { port: number; grpcPort: number } {
  const port = envPort(env, "CONNECT_PORT", Number(new URL(ownUrl).port || 80));
  const grpcPort = envPort(env, "GRPC_PORT", port === 0 ? 0 : port + GRPC_PORT_OFFSET);
  if (port !== 0 && grpcPort === port) throw new ConfigError("GRPC_PORT", `must differ from the Connect port ${port}`);
  return { port, grpcPort };
}

/** How far above its Connect port a service's metrics port is, unless METRICS_PORT says otherwise. */
export const METRICS_PORT_OFFSET = 200;

/**
 * The port of a process's Prometheus metrics (GET /metrics): METRICS_PORT, else the given
 * default (a service's Connect port plus METRICS_PORT_OFFSET; the gateway's PORT plus one).
 * 0 turns the listener off.
 */
export function metricsPort(env: Env, fallback: number, others: number[]): number {
  const port = envPort(env, "METRICS_PORT", fallback);
  if (port !== 0 && others.includes(port)) throw new ConfigError("METRICS_PORT", `must differ from the process's other ports (${others.filter((p) => p !== 0).join(", ")})`);
  return port;
}
