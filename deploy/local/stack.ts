// Runs the whole system on one machine as separate processes: the five services, the gateway
// and (without OPENAI_API_KEY) the model simulator. Used by `npm start` and the test harness.
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Subprocess } from "bun";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { connectRedis, onRedisError } from "../../services/kit/src/redis.ts";
import { Health, HealthCheckResponse_ServingStatus } from "../../proto/gen/grpc/health/v1/health_pb.ts";
import { ConfigError, GRPC_PORT_OFFSET, METRICS_PORT_OFFSET, SERVICE_URL_VARIABLES, loadDataStores, redactUrl, type ServiceUrls } from "../../services/kit/src/config.ts";
import { ensureDatabase } from "../../services/kit/src/db.ts";
import { loadGatewayConfig } from "../../gateway/src/config.ts";
import { logLevel } from "../../services/kit/src/logger.ts";
import { bundleProcess } from "./process-bundles.ts";
import { startLocalServers, type LocalServers } from "./local-servers.ts";
import { freePort } from "./private-servers.ts";
import { prepareWorkloadTokens, type WorkloadTokens } from "./workload-tokens.ts";
import { CALLERS, type StackCaller } from "../../services/kit/src/access-policy.ts";
import { settledWithin } from "../../services/kit/src/deadline.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

export const SERVICE_ENTRIES: Record<keyof ServiceUrls, string> = {
  accountsBilling: "services/accounts-billing/src/main.ts",
  workflowCatalog: "services/workflow-catalog/src/main.ts",
  articleStore: "services/article-store/src/main.ts",
  generationRunner: "services/generation-runner/src/main.ts",
  webhookDispatcher: "services/webhook-dispatcher/src/main.ts",
};
// Settings a process reads only when it starts, so they are given at its start; a value in the
// environment wins. The runner's fetch carries 4,096 requests at once instead of Bun's 256, so its
// model calls travel on it (services/generation-runner/src/domain/provider-connections.ts).
// The runner's engine sizes its heap by 512 MiB of RAM (on Kubernetes, its container's memory
// limit: CONTAINER_SIZED_ENV) rather than the machine's: JSC lets a heap grow in proportion to the
// RAM it believes it has, and with 1,000 runs in flight the runner held three times its live
// objects (P4's runner peak 318-343 MiB, 243-256 with it; docs/performance-history.md, item 49).
// The other processes keep the engine's default: given the same, the webhook path delivered 9%
// fewer a second (P5) for 40-60 MiB less at P4's peak.
export const PROCESS_START_ENV: Partial<Record<keyof ServiceUrls, Record<string, string>>> = {
  generationRunner: { BUN_CONFIG_MAX_HTTP_REQUESTS: "4096", BUN_JSC_forceRAMSize: String(512 * 2 ** 20) },
};
/** Start settings that the manifests take from the container itself (the Downward API) instead of a fixed value. */
export const CONTAINER_SIZED_ENV: Record<string, { resourceFieldRef: { resource: string } }> = {
  BUN_JSC_forceRAMSize: { resourceFieldRef: { resource: "limits.memory" } },
};
/**
 * Given to every process at its start (a value in the environment wins), and set in the image
 * likewise: Bun's engine runs without its fourth tier, the FTL compiler. Seven processes share the
 * machine's cores, and FTL's compilations (on threads of their own, for the hottest code) cost
 * them more CPU than the faster code gives back within minutes, and hold memory while they run:
 * with it off the stack creates 555-570 articles a second instead of 483-522, p99 58-66 ms
 * instead of 67-74, and the P4 peak is about 20 MiB lower (docs/performance-history.md, item 35).
 */
export const RUNTIME_START_ENV: Record<string, string> = { BUN_JSC_useFTLJIT: "0" };
const SIMULATOR_ENTRY = "services/model-simulator/src/main.ts";
const GATEWAY_ENTRY = "gateway/src/main.ts";

export type ProcessName = keyof ServiceUrls | "gateway" | "simulator";

/** Each process's own identity: the ServiceAccount it runs as on Kubernetes (CALLERS is keyed by process). */
const CALLER_OF: Record<Exclude<ProcessName, "simulator">, StackCaller> = CALLERS;

export interface StackOptions {
  env?: Record<string, string | undefined>;
  /** Pick free ports instead of the defaults (tests). */
  randomPorts?: boolean;
  /** Where child stdout goes: "inherit" (npm start), "ignore", or "pipe" (tests that read the log lines). */
  output?: "inherit" | "ignore" | "pipe";
  /**
   * A folder where each process's output (stdout and stderr) is appended to <process>.log instead
   * (a restarted process adds to its file): the test suite keeps its stack's lines for CI to show.
   */
  logDir?: string;
  readyTimeoutMs?: number;
  /** Aborting it while the stack starts stops every process started so far, then startStack rejects. */
  signal?: AbortSignal;
  /** Start a private Postgres / Redis when none answers at the defaults (LOCAL_SERVERS; npm start). */
  localServers?: boolean;
  /** Where one-line notices go (the private servers started); console.log when unset. */
  notify?: (line: string) => void;
  /**
   * Where the launcher keeps the keys that sign the processes' identity tokens (workload-tokens.ts):
   * npm start keeps them in .local/identity so the operator CLI's token outlives a restart; unset,
   * a temporary directory removed when the stack stops.
   */
  identityDir?: string;
  /** A command a process runs under, before Bun's own (bench:instructions runs the gateway under valgrind). */
  runUnder?: Partial<Record<ProcessName, string[]>>;
}

export interface Stack {
  baseUrl: string;
  env: Record<string, string>;
  /** Each service's gRPC (HTTP/2) address, for outside clients such as grpc-js. */
  grpcUrls: Record<keyof ServiceUrls, string>;
  /** The gateway's gRPC address: the public API for internal teams (articles.api.v1). */
  publicGrpcUrl: string;
  simulatorUrl?: string;
  /** Each process's metrics address (GET /metrics; the gateway's also serves /queues); absent when off. */
  metricsUrls: Partial<Record<Exclude<ProcessName, "simulator">, string>>;
  processes: Map<ProcessName, Subprocess>;
  /** The launcher's workload identities: each process's token, and tokens for any other caller. */
  identity: WorkloadTokens;
  /** The operator's token file, for the operator CLI (OPERATOR_TOKEN_FILE); no process is given it. */
  operatorTokenFile: string;
  /** Starts one process again (after kill) and waits until it is ready. */
  start(name: ProcessName): Promise<void>;
  /** Sends a signal to one process and waits for it to exit. */
  kill(name: ProcessName, signal?: NodeJS.Signals): Promise<void>;
  stop(): Promise<void>;
}

/** Whether another process already listens on the port (on any address this stack's processes would use). */
async function portTaken(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(true));
    server.listen({ port, host: "0.0.0.0", exclusive: true }, () => server.close(() => resolve(false)));
  });
}

/** Fails with one line naming the variable when a port the stack would listen on is taken. */
async function checkPortsFree(ports: [variable: string, port: number][]): Promise<void> {
  for (const [variable, port] of ports) {
    if (port !== 0 && (await portTaken(port))) throw new ConfigError(variable, `port ${port} is already in use by another process (is another stack running?)`);
  }
}

/** Fails with one line naming the variable when Postgres or Redis cannot be reached. */
async function checkDependencies(env: Record<string, string>): Promise<void> {
  const config = loadDataStores(env);
  await ensureDatabase(config.databaseUrl);
  const redis = connectRedis(config.redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 3000, retryStrategy: () => null });
  let reason = "";
  onRedisError(redis, (error) => (reason ||= error.message));
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new ConfigError("REDIS_URL", `cannot reach ${redactUrl(config.redisUrl)} (${reason || (error as Error).message})`);
  } finally {
    redis.disconnect();
  }
}

/** A process killed by a signal has no exit code, only a signal code. */
export const hasExited = (child: Subprocess) => child.exitCode !== null || child.signalCode !== null;

async function waitUntil(ready: () => Promise<boolean>, child: Subprocess, name: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (signal?.aborted) throw new Error("stopped while starting");
    if (hasExited(child)) throw new Error(`${name} exited (${child.signalCode ?? `code ${child.exitCode}`}) during start`);
    if (await ready().catch(() => false)) return;
    await Bun.sleep(100);
  }
  throw new Error(`${name} was not ready within ${timeoutMs} ms`);
}

const grpcReady = (url: string) => async () => {
  const health = createClient(Health, createGrpcTransport({ baseUrl: url, defaultTimeoutMs: 1000 }));
  const reply = await health.check({});
  return reply.status === HealthCheckResponse_ServingStatus.SERVING;
};

// Any answer below 500 means the HTTP server is up (the simulator wants a key on /v1).
const httpReady = (url: string) => async () => (await fetch(url, { signal: AbortSignal.timeout(1000) })).status < 500;

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries({ ...process.env, ...options.env })) if (v !== undefined) env[k] = v;
  // The key signing secrets are stored under: npm start keeps one in .local/; a test stack makes its own.
  env.WEBHOOK_SECRET_KEY ??= randomBytes(32).toString("base64");
  if (options.randomPorts) {
    env.PORT = String(await freePort());
    for (const variable of Object.values(SERVICE_URL_VARIABLES)) env[variable] = `http://127.0.0.1:${await freePort()}`;
  }
  // Every process's identity token, signed by the launcher's key (its files go when the stack stops).
  const ownIdentityDir = options.identityDir ? undefined : mkdtempSync(join(tmpdir(), "article-identity-"));
  const identity = await prepareWorkloadTokens(options.identityDir ?? ownIdentityDir!);
  const forgetIdentity = () => {
    identity.stop();
    if (ownIdentityDir) rmSync(ownIdentityDir, { recursive: true, force: true });
  };
  Object.assign(env, identity.env);
  const operatorTokenFile = await identity.tokenFile(CALLERS.operator);
  // Settings are checked as a process will see them: each is given its own token file at its start.
  const asProcess = () => ({ ...env, IDENTITY_TOKEN_FILE: operatorTokenFile });
  let gatewayConfig: ReturnType<typeof loadGatewayConfig>;
  try {
    // Validates every setting first: one clear line naming a bad variable.
    gatewayConfig = loadGatewayConfig(asProcess());
    logLevel(env);
  } catch (error) {
    forgetIdentity();
    throw error;
  }
  const local: LocalServers | undefined = options.localServers ? await startLocalServers(env, options.notify ?? console.log, options.signal) : undefined;
  // A start that fails before any process runs still stops the private servers it started.
  const undo = async (error: unknown): Promise<never> => {
    forgetIdentity();
    await local?.stop();
    throw error;
  };
  await checkDependencies(env).catch(undo);

  const processes = new Map<ProcessName, Subprocess>();
  const entries = new Map<ProcessName, { file: string; ready: () => Promise<boolean>; env: Record<string, string> }>();

  // Every port a process of the stack will listen on, with the variable that sets it.
  const ports: [variable: string, port: number][] = [["PORT", gatewayConfig.port]];
  let simulatorUrl: string | undefined;
  if (!env.OPENAI_API_KEY && existsSync(root + SIMULATOR_ENTRY)) {
    const port = options.randomPorts ? await freePort() : Number(env.SIMULATOR_PORT ?? 8090);
    simulatorUrl = `http://127.0.0.1:${port}`;
    env.SIMULATOR_PORT = String(port);
    env.OPENAI_BASE_URL = `${simulatorUrl}/v1`;
    env.OPENAI_API_KEY = "simulator";
    env.SIMULATOR_URL = simulatorUrl;
    entries.set("simulator", { file: SIMULATOR_ENTRY, ready: httpReady(`${simulatorUrl}/v1/models`), env: {} });
    ports.push(["SIMULATOR_PORT", port]);
  }
  const grpcUrls = {} as Record<keyof ServiceUrls, string>;
  const metricsUrls: Stack["metricsUrls"] = {};
  // Each process's METRICS_PORT: a free one with random ports, else the default beside its own
  // port; a METRICS_PORT of 0 in the environment turns them all off. Recorded as <NAME>_METRICS_PORT.
  const metricsOff = env.METRICS_PORT?.trim() === "0";
  const metricsPortOf = async (name: Exclude<ProcessName, "simulator">, fallback: number) => {
    if (metricsOff) return "0";
    const port = options.randomPorts ? await freePort() : fallback;
    env[`${name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}_METRICS_PORT`] = String(port);
    metricsUrls[name] = `http://127.0.0.1:${port}`;
    ports.push([`METRICS_PORT of ${name}`, port]);
    return String(port);
  };
  const startSettings = (name: keyof ServiceUrls) => Object.fromEntries(Object.entries(PROCESS_START_ENV[name] ?? {}).filter(([key]) => env[key] === undefined));
  for (const [name, file] of Object.entries(SERVICE_ENTRIES) as [keyof ServiceUrls, string][]) {
    const url = new URL(gatewayConfig.services[name]);
    const grpcPort = options.randomPorts ? await freePort() : Number(url.port) + GRPC_PORT_OFFSET;
    grpcUrls[name] = `http://${url.hostname}:${grpcPort}`;
    const metricsPort = await metricsPortOf(name, Number(url.port) + METRICS_PORT_OFFSET);
    entries.set(name, { file, ready: grpcReady(grpcUrls[name]), env: { IDENTITY_TOKEN_FILE: await identity.tokenFile(CALLER_OF[name]), CONNECT_PORT: url.port, GRPC_PORT: String(grpcPort), METRICS_PORT: metricsPort, ...startSettings(name) } });
    ports.push([SERVICE_URL_VARIABLES[name], Number(url.port)], [`${SERVICE_URL_VARIABLES[name]} (its gRPC port)`, grpcPort]);
  }
  const gatewayMetricsPort = await metricsPortOf("gateway", gatewayConfig.metricsPort);
  const gatewayGrpcPort = options.randomPorts ? await freePort() : gatewayConfig.grpcPort;
  ports.push(["GRPC_PORT of the gateway", gatewayGrpcPort]);
  // A second stack on the same ports would share them with the first: refused before anything starts.
  await checkPortsFree(ports).catch(undo);
  const baseUrl = `http://127.0.0.1:${gatewayConfig.port}`;
  const publicGrpcUrl = `http://127.0.0.1:${gatewayGrpcPort}`;
  // Ready once both listeners answer: the gRPC one starts after the HTTP one.
  const gatewayReady = async () => (await httpReady(`${baseUrl}/healthz`)()) && (await grpcReady(publicGrpcUrl)());
  entries.set("gateway", { file: GATEWAY_ENTRY, ready: gatewayReady, env: { IDENTITY_TOKEN_FILE: await identity.tokenFile(CALLER_OF.gateway), METRICS_PORT: gatewayMetricsPort, GRPC_PORT: String(gatewayGrpcPort) } });

  // PROFILE=<process> runs that process under Bun's sampling profiler; on exit it writes a
  // readable (markdown) profile into .local/profiles (docs/performance.md, "Finding the time").
  const profiled = (name: ProcessName) => (env.PROFILE?.split(",").includes(name) ? ["--cpu-prof-md", `--cpu-prof-dir=${root}.local/profiles`] : []);
  const bundles = new Map(await Promise.all([...entries].map(async ([name, entry]) => [name, await bundleProcess(root + entry.file)] as const)).catch(undo));
  if (options.logDir) mkdirSync(options.logDir, { recursive: true });
  const spawn = (name: ProcessName) => {
    const entry = entries.get(name)!;
    const logFile = options.logDir ? openSync(join(options.logDir, `${name}.log`), "a") : undefined;
    const child = Bun.spawn([...(options.runUnder?.[name] ?? []), process.execPath, ...profiled(name), bundles.get(name)!], {
      cwd: root,
      env: { ...RUNTIME_START_ENV, ...env, ...entry.env },
      stdout: logFile ?? options.output ?? "inherit",
      stderr: logFile ?? "inherit",
    });
    // The child has its own copy of the descriptor.
    if (logFile !== undefined) closeSync(logFile);
    processes.set(name, child);
    return child;
  };

  const stop = async () => {
    const running = [...processes.values()].filter((p) => !hasExited(p));
    for (const p of running) p.kill("SIGTERM");
    await settledWithin(Promise.all(running.map((p) => p.exited)), 15_000);
    for (const p of running) if (!hasExited(p)) p.kill("SIGKILL");
    // Last, once nothing uses them any more.
    await local?.stop();
    forgetIdentity();
  };

  const timeout = options.readyTimeoutMs ?? 30_000;
  const { signal } = options;
  try {
    // Services first (they migrate their own schemas), then the gateway in front of them.
    const services = [...entries.keys()].filter((n) => n !== "gateway");
    if (signal?.aborted) throw new Error("stopped while starting");
    await Promise.all(services.map((name) => waitUntil(entries.get(name)!.ready, spawn(name), name, timeout, signal)));
    if (signal?.aborted) throw new Error("stopped while starting");
    await waitUntil(entries.get("gateway")!.ready, spawn("gateway"), "gateway", timeout, signal);
  } catch (error) {
    await stop();
    throw error;
  }

  return {
    baseUrl,
    env,
    grpcUrls,
    publicGrpcUrl,
    simulatorUrl,
    metricsUrls,
    processes,
    identity,
    operatorTokenFile,
    async start(name) {
      await waitUntil(entries.get(name)!.ready, spawn(name), name, timeout);
    },
    async kill(name, signal = "SIGKILL") {
      const child = processes.get(name);
      if (!child || hasExited(child)) return;
      child.kill(signal);
      await child.exited;
    },
    stop,
  };
}
