// `npm run deploy:smoke`: builds the container image (two stages: docs/container-image.md), fails
// when it is larger than 250 MB, and runs every process of the system from it, each in its own
// container with the environment deploy/k8s/base gives it, against this machine's Postgres and
// Redis; then creates a tenant and generates one article through the gateway container. The
// cluster's part in workload identity is played here: a signing key, its JWKS and a token per
// ServiceAccount (deploy/local/workload-tokens.ts), mounted read-only into each container as its
// projected token would be. Last, it asks for what the runtime stage keeps besides the bundles:
// the API reference's script, the queue dashboard's page and scripts, and the production overlay's
// TLS health probe at the path its manifests name. Everything it starts is removed at the end, also
// on failure and Ctrl-C: containers, the database, the Redis keys and the keys and tokens. Kept:
// the image and its build stage, tagged <image>-build (the next run builds from their cache; the
// ones a build replaces are removed).
// Needs root, podman and runc (and debootstrap for the base images); minutes long, so it is not
// part of the test suite. docs/container-image.md.
import { randomBytes } from "node:crypto";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Subprocess } from "bun";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import IORedis from "ioredis";
import postgres from "postgres";
import { Health, HealthCheckResponse_ServingStatus } from "../../proto/gen/grpc/health/v1/health_pb.ts";
import { OperatorService } from "../../proto/gen/articles/accounts_billing/v1/operator_pb.ts";
import { serviceClient } from "../../services/kit/src/clients.ts";
import { renderKustomization, type K8sObject } from "../k8s/render.ts";
import { freePort } from "../local/private-servers.ts";
import { prepareWorkloadTokens, type WorkloadTokens } from "../local/workload-tokens.ts";
import { settledWithin } from "../../services/kit/src/deadline.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const env = process.env;
const IMAGE = env.SMOKE_IMAGE || "localhost/article-service:local";
// The Dockerfile's build stage, tagged so that the next build starts from it and the one it replaces goes.
const BUILD_STAGE_IMAGE = IMAGE.replace(/(:[\w.-]+)?$/, (tag) => `${tag || ":latest"}-build`);
// Unset: Debian bases built here by build-base.sh (no registry needed). Set them to use others,
// e.g. node:20-bookworm-slim (the build stage's) and debian:bookworm-slim (the runtime stage's).
const BASE_IMAGE = env.BASE_IMAGE || "localhost/debian-base:bookworm";
const RUNTIME_IMAGE = env.RUNTIME_IMAGE || "localhost/debian-runtime:bookworm";
// Issue 33: a lean image. Bytes as podman counts them (and as the line printed shows, in MB).
const MAX_IMAGE_BYTES = Number(env.SMOKE_MAX_IMAGE_MB || 250) * 1e6;
const ADMIN_DATABASE_URL = env.SMOKE_DATABASE_ADMIN_URL || "postgres://postgres@127.0.0.1:5432/postgres";
const REDIS_URL = env.SMOKE_REDIS_URL || "redis://127.0.0.1:6379";
const READY_TIMEOUT_MS = Number(env.SMOKE_READY_TIMEOUT_MS || 180_000);
const ARTICLE_TIMEOUT_MS = Number(env.SMOKE_ARTICLE_TIMEOUT_MS || 300_000);
// runc: crun is not what this machine's podman runs with. Host networking: no CNI/netavark setup
// needed, and every container reaches Postgres, Redis and the others on 127.0.0.1. The ulimits stay
// within the host's hard limits, which podman's defaults exceed here.
const PODMAN = ["podman", "--runtime", env.PODMAN_RUNTIME || "runc"];
const RUN_OPTIONS = ["--network", "host", "--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096"];

const id = randomBytes(3).toString("hex");
const database = `articles_smoke_${id}`;
const redisPrefix = `smoke-${id}`;
// The signing key and tokens (keys/, this user's only) and what the containers read (identity/).
const identityDir = mkdtempSync(join(tmpdir(), `article-smoke-${id}-`));
// Where the containers see identity/: the stand-in for each pod's projected identity volume.
const IDENTITY_MOUNT = "/identity";
const started = Date.now();

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)}s`;
const say = (line: string) => console.log(`[${seconds(Date.now() - started).padStart(6)}] ${line}`);

/** Runs one step and prints it with its duration. */
async function step<T>(name: string, run: () => Promise<T>, done?: (result: T) => string): Promise<T> {
  const begun = Date.now();
  say(`${name}…`);
  const result = await run();
  say(`${name}: ${done ? done(result) + ", " : ""}took ${seconds(Date.now() - begun)}`);
  return result;
}

// Commands under way (a build, a podman run): a signal stops them before the clean-up.
const running = new Set<Subprocess>();
/** Set by SIGINT/SIGTERM: nothing more starts, the clean-up runs and the process exits. */
let interrupted = false;

/** Runs a command; its output goes to the terminal when `show`, else is kept for the error. */
async function run(cmd: string[], opts: { show?: boolean; allowFail?: boolean } = {}): Promise<string> {
  const child = Bun.spawn(cmd, { cwd: root, stdout: opts.show ? "inherit" : "pipe", stderr: opts.show ? "inherit" : "pipe", stdin: "ignore" });
  running.add(child);
  const [out, err] = opts.show ? ["", ""] : await Promise.all([new Response(child.stdout as ReadableStream).text(), new Response(child.stderr as ReadableStream).text()]);
  const code = await child.exited;
  running.delete(child);
  if (code !== 0 && !opts.allowFail) throw new Error(`${cmd.slice(0, 4).join(" ")}… exited ${code}${err ? `: ${err.trim().split("\n").slice(-5).join(" | ")}` : ""}`);
  return out.trim();
}

interface Process {
  /** The Deployment's name, or "model-simulator" (no manifest: it stands in for the model provider). */
  name: string;
  args: string[];
  env: Record<string, string>;
  /** podman --volume arguments: the identity directory for the manifests' processes. */
  volumes: string[];
  /** Resolves true once the process answers its health check. */
  ready: () => Promise<boolean>;
  /** A service's gRPC port on this machine (its health service). */
  grpcPort?: number;
}

const grpcReady = (url: string) => async () => {
  const health = createClient(Health, createGrpcTransport({ baseUrl: url, defaultTimeoutMs: 1000 }));
  return (await health.check({})).status === HealthCheckResponse_ServingStatus.SERVING;
};
const httpReady = (url: string, ok: (status: number) => boolean) => async () => ok((await fetch(url, { signal: AbortSignal.timeout(1000) })).status);

type Container = {
  name: string;
  env?: { name: string; value?: string }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  args?: string[];
  ports?: { name: string; containerPort: number }[];
};
type PodSpec = { serviceAccountName?: string; containers: Container[] };
const podOf = (deployment: K8sObject) => (deployment.spec as { template: { spec: PodSpec } }).template.spec;
const containerOf = (deployment: K8sObject) => podOf(deployment).containers[0];

/**
 * The keys and tokens a cluster would give the pods, in identityDir: the launcher's (kept in
 * keys/, never mounted: it holds the private key) and a copy the containers read, as uid 1000,
 * through a read-only mount: the JWKS and each ServiceAccount's token.
 */
async function prepareIdentity(serviceAccounts: string[]): Promise<{ tokens: WorkloadTokens; env: Record<string, string>; tokenFile: (account: string) => string }> {
  const tokens = await prepareWorkloadTokens(join(identityDir, "keys"));
  const published = join(identityDir, "identity");
  mkdirSync(join(published, "tokens"), { recursive: true });
  const publish = (from: string, to: string) => {
    copyFileSync(from, join(published, to));
    chmodSync(join(published, to), 0o644);
  };
  publish(tokens.env.IDENTITY_JWKS, "jwks.json");
  for (const account of serviceAccounts) publish(await tokens.tokenFile(account), `tokens/${account}.jwt`);
  for (const dir of [published, join(published, "tokens")]) chmodSync(dir, 0o755);
  // The processes read the key set from a file here (the cluster's is an https URL): no fetch token or CA.
  const env = { ...tokens.env, IDENTITY_JWKS: `${IDENTITY_MOUNT}/jwks.json` };
  return { tokens, env, tokenFile: (account) => `${IDENTITY_MOUNT}/tokens/${account}.jwt` };
}

/**
 * Every process with the environment its manifest gives it: the ConfigMap and its Secrets
 * (envFrom, in order), then the container's own env. Addresses become 127.0.0.1 ports (host
 * networking, so each process gets free ports of its own); the Secrets' values are fresh (the
 * smoke run's database, a random key), models run on the simulator; each process's identity token
 * is its ServiceAccount's, the key set the launcher's.
 */
async function plan(): Promise<{ migrations: Migration[]; processes: Process[]; gatewayUrl: string; gatewayAdminUrl: string; accountsBillingUrl: string; tokens: WorkloadTokens }> {
  const objects = renderKustomization(root + "deploy/k8s/base");
  const dataOf = (kind: "ConfigMap" | "Secret", name: string) => {
    const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
    if (!found) throw new Error(`deploy/k8s/base has no ${kind} ${name}, which a Deployment takes`);
    return { ...(found.data as Record<string, string> | undefined), ...(found.stringData as Record<string, string> | undefined) };
  };
  const config = dataOf("ConfigMap", "article-service-config");
  const deployments = objects.filter((o) => o.kind === "Deployment");

  const ports = new Map<string, Record<string, number>>();
  for (const deployment of deployments) {
    const assigned: Record<string, number> = {};
    for (const port of containerOf(deployment).ports ?? []) assigned[port.name] = await freePort();
    ports.set(deployment.metadata.name, assigned);
  }
  const simulatorPort = await freePort();
  const simulatorUrl = `http://127.0.0.1:${simulatorPort}`;
  const gatewayUrl = `http://127.0.0.1:${ports.get("gateway")!.http}`;
  const databaseUrl = new URL(ADMIN_DATABASE_URL);
  databaseUrl.pathname = `/${database}`;

  // What the smoke run puts in place of each Secret's placeholder; a key not listed here fails the run.
  const secretValues: Record<string, string> = {
    DATABASE_URL: databaseUrl.toString(),
    WEBHOOK_SECRET_KEY: randomBytes(32).toString("base64"),
    // As `npm start` does without a provider key: the simulator serves the models and research.
    OPENAI_API_KEY: "simulator",
  };
  const secretValue = (secret: string, key: string, value: string) => {
    if (key in secretValues) return secretValues[key]!;
    if (value === "") return value;
    throw new Error(`Secret ${secret} holds ${key}, for which the smoke run has no value`);
  };

  const serviceAccounts = deployments.map((deployment) => {
    const account = podOf(deployment).serviceAccountName;
    if (!account) throw new Error(`Deployment ${deployment.metadata.name} names no serviceAccountName`);
    return account;
  });
  const identity = await prepareIdentity(serviceAccounts);

  // The ConfigMap's service addresses (http://<service>:<connect port>) → this machine's ports.
  const addresses: Record<string, string> = {};
  for (const [key, value] of Object.entries(config)) {
    const match = /^http:\/\/([a-z-]+):\d+$/.exec(value);
    if (match && ports.has(match[1])) addresses[key] = `http://127.0.0.1:${ports.get(match[1])!.connect}`;
  }

  const processes: Process[] = deployments.map((deployment, index) => {
    const container = containerOf(deployment);
    const name = deployment.metadata.name;
    const own = ports.get(name)!;
    const portOf = new Map((container.ports ?? []).map((p) => [String(p.containerPort), String(own[p.name])]));
    const processEnv: Record<string, string> = {};
    for (const from of container.envFrom ?? []) {
      if (from.configMapRef) Object.assign(processEnv, dataOf("ConfigMap", from.configMapRef.name), addresses);
      if (from.secretRef) for (const [key, value] of Object.entries(dataOf("Secret", from.secretRef.name))) processEnv[key] = secretValue(from.secretRef.name, key, value);
    }
    // CONNECT_PORT, GRPC_PORT and PORT name the container's ports: the free ones chosen for them.
    for (const { name: variable, value = "" } of container.env ?? []) processEnv[variable] = portOf.get(value) ?? value;
    if (!processEnv.IDENTITY_TOKEN_FILE) throw new Error(`Deployment ${name} sets no IDENTITY_TOKEN_FILE`);
    delete processEnv.IDENTITY_JWKS_TOKEN_FILE;
    delete processEnv.IDENTITY_JWKS_CA_FILE;
    Object.assign(processEnv, identity.env, { IDENTITY_TOKEN_FILE: identity.tokenFile(serviceAccounts[index]!) }, {
      REDIS_URL,
      REDIS_PREFIX: redisPrefix,
      PUBLIC_BASE_URL: gatewayUrl,
    });
    // The process that holds the provider key talks to the simulator instead.
    if ("OPENAI_API_KEY" in processEnv) Object.assign(processEnv, { OPENAI_BASE_URL: `${simulatorUrl}/v1`, SIMULATOR_URL: simulatorUrl });
    const ready = name === "gateway" ? httpReady(`${gatewayUrl}/healthz`, (s) => s === 200) : grpcReady(`http://127.0.0.1:${own.grpc}`);
    return { name, args: container.args ?? [], env: processEnv, volumes: ["--volume", `${join(identityDir, "identity")}:${IDENTITY_MOUNT}:ro,Z`], ready, grpcPort: name === "gateway" ? undefined : own.grpc };
  });
  // The gateway's operator port (the queue dashboard): METRICS_PORT, by default PORT + 1, as the manifest's ports say.
  const gatewayEnv = processes.find((p) => p.name === "gateway")!.env;
  const gatewayAdminUrl = `http://127.0.0.1:${gatewayEnv.METRICS_PORT || Number(gatewayEnv.PORT) + 1}`;
  processes.unshift({
    name: "model-simulator",
    args: ["services/model-simulator/src/main.bundle.js"],
    env: { SIMULATOR_PORT: String(simulatorPort), SIMULATOR_HOST: "127.0.0.1", BUN_RUNTIME_TRANSPILER_CACHE_PATH: "0" },
    volumes: [],
    // Any answer below 500 means it is up (it wants a key on /v1).
    ready: httpReady(`${simulatorUrl}/v1/models`, (s) => s < 500),
  });
  // The release's migration Job: its containers in order (init containers, then its own), each run to its end.
  const job = objects.find((o) => o.kind === "Job" && o.metadata.name === "migrate");
  if (!job) throw new Error("deploy/k8s/base has no migration Job (migrate)");
  const jobPod = podOf(job) as PodSpec & { initContainers?: Container[] };
  const migrations = [...(jobPod.initContainers ?? []), ...jobPod.containers].map((container) => {
    const env: Record<string, string> = {};
    for (const from of container.envFrom ?? []) {
      if (from.configMapRef) Object.assign(env, dataOf("ConfigMap", from.configMapRef.name));
      if (from.secretRef) for (const [key, value] of Object.entries(dataOf("Secret", from.secretRef.name))) env[key] = secretValue(from.secretRef.name, key, value);
    }
    for (const { name: variable, value = "" } of container.env ?? []) env[variable] = value;
    return { name: container.name, args: container.args ?? [], env };
  });
  return { migrations, processes, gatewayUrl, gatewayAdminUrl, accountsBillingUrl: addresses.ACCOUNTS_BILLING_URL!, tokens: identity.tokens };
}

interface Migration {
  name: string;
  args: string[];
  env: Record<string, string>;
}

/** Runs one container of the migration Job to its end, as the Job's pod runs it; its exit code must be 0. */
async function runMigration(migration: Migration): Promise<void> {
  if (interrupted) throw new Error("interrupted");
  const envArgs = Object.entries(migration.env).flatMap(([k, v]) => ["--env", `${k}=${v}`]);
  await run([...PODMAN, "run", "--rm", "--name", `article-smoke-${id}-migrate-${migration.name}`, "--label", `article-smoke=${id}`, ...RUN_OPTIONS,
    "--user", "1000:1000", "--read-only", "--tmpfs", "/tmp:size=64m", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
    ...envArgs, IMAGE, ...migration.args]);
}

/** Starts one process's container the way the manifests run its pod: uid 1000, read-only root, no capabilities, /tmp writable. */
async function startContainer(proc: Process): Promise<string> {
  const name = `article-smoke-${id}-${proc.name}`;
  // Checked in the same tick as the spawn: after a signal, the clean-up sees every container started.
  if (interrupted) throw new Error("interrupted");
  const envArgs = Object.entries(proc.env).flatMap(([k, v]) => ["--env", `${k}=${v}`]);
  await run([...PODMAN, "run", "--detach", "--name", name, "--label", `article-smoke=${id}`, ...RUN_OPTIONS,
    "--user", "1000:1000", "--read-only", "--tmpfs", "/tmp:size=64m", "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
    ...proc.volumes, ...envArgs, IMAGE, ...proc.args]);
  return name;
}

async function containerState(name: string): Promise<string> {
  return run([...PODMAN, "container", "inspect", "--format", "{{.State.Status}} {{.State.ExitCode}}", name], { allowFail: true });
}

async function waitReady(proc: Process, container: string): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (await proc.ready().catch(() => false)) return;
    if (interrupted) throw new Error("interrupted");
    const state = await containerState(container);
    if (!state.startsWith("running")) throw new Error(`${proc.name}'s container stopped (${state}); its last lines:\n${await lastLogLines(container)}`);
    await Bun.sleep(500);
  }
  throw new Error(`${proc.name} was not healthy within ${seconds(READY_TIMEOUT_MS)}; its last lines:\n${await lastLogLines(container)}`);
}

async function lastLogLines(container: string, lines = 20): Promise<string> {
  const child = Bun.spawn([...PODMAN, "logs", "--tail", String(lines), container], { stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text()]);
  await child.exited;
  return (out + err).trim().replace(/^/gm, "    ");
}

async function api<T>(gatewayUrl: string, key: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(gatewayUrl + path, {
    method: body === undefined ? "GET" : "POST",
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${body === undefined ? "GET" : "POST"} ${path} answered ${response.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as T;
}

type ArticleReply = { data: { id: number; status: string; actual_word_count?: number | null; ai_model_used?: string | null; title: string; error_message?: string | null } };

let cleaning: Promise<void> | undefined;
/** Removes every container, the database and the Redis keys of this run; safe to call twice. */
function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    const begun = Date.now();
    say("cleaning up…");
    // A podman run stopped by a signal may still create its container: wait for it, then remove by label.
    const inFlight = [...running];
    await settledWithin(Promise.all(inFlight.map((child) => child.exited)), 15_000);
    const labelled = (await run([...PODMAN, "ps", "--all", "--quiet", "--filter", `label=article-smoke=${id}`], { allowFail: true })).split("\n").filter(Boolean);
    // podman rm --time: SIGTERM first, as Kubernetes does, then SIGKILL after 10 s.
    if (labelled.length) await run([...PODMAN, "rm", "--force", "--time", "10", ...labelled], { allowFail: true });
    const sql = postgres(ADMIN_DATABASE_URL, { max: 1, onnotice: () => {} });
    await sql.unsafe(`drop database if exists "${database}" with (force)`).catch((error) => say(`could not drop database ${database}: ${(error as Error).message}`));
    await sql.end({ timeout: 1 });
    const redis = new IORedis(REDIS_URL, { maxRetriesPerRequest: 1 });
    let removed = 0;
    try {
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", `${redisPrefix}:*`, "COUNT", 500);
        if (keys.length) removed += await redis.del(...keys);
        cursor = next;
      } while (cursor !== "0");
    } catch (error) {
      say(`could not remove the Redis keys under ${redisPrefix}: ${(error as Error).message}`);
    } finally {
      redis.disconnect();
    }
    // Made by mkdtemp under the temporary directory: never anything else.
    if (identityDir.startsWith(join(tmpdir(), "article-smoke-"))) rmSync(identityDir, { recursive: true, force: true });
    say(`cleaned up: ${labelled.length} containers removed, database ${database} dropped, ${removed} Redis keys under ${redisPrefix}: removed, identity keys and tokens removed, took ${seconds(Date.now() - begun)}`);
  })();
  return cleaning;
}

const onSignal = (signal: string) => {
  if (interrupted) return;
  interrupted = true;
  say(`${signal}: stopping`);
  for (const child of running) child.kill("SIGTERM");
  void cleanUp().then(() => process.exit(130));
};
process.on("SIGINT", () => onSignal("SIGINT"));
process.on("SIGTERM", () => onSignal("SIGTERM"));

async function main(): Promise<void> {
  say(`smoke run ${id}: image ${IMAGE} built on ${BASE_IMAGE}, running on ${RUNTIME_IMAGE}, database ${database}, Redis prefix ${redisPrefix}:`);
  if (!env.BASE_IMAGE) await step("build stage's base image", () => run(["bash", "deploy/container/build-base.sh", BASE_IMAGE], { show: true }));
  if (!env.RUNTIME_IMAGE) await step("runtime stage's base image", () => run(["bash", "deploy/container/build-base.sh", "--runtime", RUNTIME_IMAGE], { show: true }));
  const inspect = async (image: string) => (await run([...PODMAN, "image", "inspect", "--format", "{{.Id}} {{.Size}}", image], { allowFail: true })).split(" ");
  const [previous, previousSize] = await inspect(IMAGE);
  const [previousBuildStage] = await inspect(BUILD_STAGE_IMAGE);
  // The CA bundle this machine trusts (a TLS-inspecting proxy's) goes to npm inside the build only.
  const ca = env.NODE_EXTRA_CA_CERTS && existsSync(env.NODE_EXTRA_CA_CERTS)
    ? ["--volume", `${env.NODE_EXTRA_CA_CERTS}:/run/build-ca.crt:ro`, "--build-arg", "NODE_EXTRA_CA_CERTS=/run/build-ca.crt"]
    : [];
  // --force-rm: a failed or interrupted build leaves no working container behind either.
  const build = (...args: string[]) => run([...PODMAN, "build", "--force-rm", ...RUN_OPTIONS, "--file", "deploy/container/Dockerfile", "--ignorefile", "deploy/container/Dockerfile.dockerignore",
    "--build-arg", `BASE_IMAGE=${BASE_IMAGE}`, "--build-arg", `RUNTIME_IMAGE=${RUNTIME_IMAGE}`, ...ca, ...args, "."], { show: !!env.SMOKE_BUILD_LOG });
  await step("image build", async () => {
    // The build stage first, under its own tag; the image's build then finds every step of it cached.
    await build("--target", "build", "--tag", BUILD_STAGE_IMAGE);
    await build("--tag", IMAGE);
  }, () => `built, its build stage kept as ${BUILD_STAGE_IMAGE}`);
  const [built, size] = await inspect(IMAGE);
  const [builtBuildStage] = await inspect(BUILD_STAGE_IMAGE);
  const megabytes = (bytes: number) => `${(bytes / 1e6).toFixed(0)} MB`;
  // Images these builds replaced would stay behind untagged (with the build stage's npm install): their layers are no cache any more.
  const replaced = previous && previous !== built;
  if (replaced) await run([...PODMAN, "rmi", previous], { allowFail: true });
  if (previousBuildStage && previousBuildStage !== builtBuildStage) await run([...PODMAN, "rmi", previousBuildStage], { allowFail: true });
  say(`image ${IMAGE}: ${megabytes(Number(size))}, at most ${megabytes(MAX_IMAGE_BYTES)}${replaced ? ` (the image it replaced: ${megabytes(Number(previousSize))})` : ""}`);
  if (Number(size) > MAX_IMAGE_BYTES) throw new Error(`the image is ${megabytes(Number(size))}, more than ${megabytes(MAX_IMAGE_BYTES)}: docs/container-image.md says what belongs in it`);

  const { migrations, processes, gatewayUrl, gatewayAdminUrl, accountsBillingUrl, tokens } = await plan();
  // As a release is rolled out: the migration Job first; the Deployments only verify their schema.
  await step("migration Job", async () => {
    for (const migration of migrations) await runMigration(migration);
  }, () => `${migrations.length} schemas migrated (${migrations.map((m) => m.name).join(", ")})`);
  // The simulator and the services first, the gateway last: its health needs the services.
  const order = [...processes.filter((p) => p.name !== "gateway"), processes.find((p) => p.name === "gateway")!];
  const containers = new Map<string, string>();
  await step("containers start", async () => {
    // Each container is waited for from its own start; the gateway starts once the others run.
    const waits: Promise<void>[] = [];
    for (const proc of order) {
      const begun = Date.now();
      const name = await startContainer(proc);
      containers.set(proc.name, name);
      say(`  ${proc.name.padEnd(18)} started (${name})`);
      const ready = waitReady(proc, name).then(() => {
        const probe = proc.name === "gateway" ? "GET /healthz" : proc.name === "model-simulator" ? "HTTP" : "gRPC health";
        say(`  ${proc.name.padEnd(18)} healthy ${seconds(Date.now() - begun)} after its start (${probe})`);
      });
      // Reported by Promise.all below, even when it fails while later containers are still starting.
      ready.catch(() => {});
      waits.push(ready);
    }
    await Promise.all(waits);
  }, () => `${order.length} containers healthy`);

  // The operator's identity, as `kubectl create token operator --audience article-service` gives it.
  const operator = serviceClient(OperatorService, { baseUrl: accountsBillingUrl, credential: await tokens.credential("operator") });
  const tenant = await step("demo tenant", async () => {
    const { created } = await operator.ensureDemoTenant({});
    if (!created) throw new Error("the fresh database already had a demo tenant");
    return { key: created.token, accountId: created.account!.id, projectId: Number(created.project!.id) };
  }, (t) => `account ${t.accountId}, project ${t.projectId}, API key issued`);

  const created = await step("article created", () => api<ArticleReply>(gatewayUrl, tenant.key, "/v1/articles", {
    project_id: tenant.projectId,
    title: "How to brew pour-over coffee",
    article_type: "blog_post",
    target_word_count: 800,
    tone: "friendly",
    point_of_view: "second_person",
    language: "en",
    target_keyword: "pour-over coffee",
    research_enabled: true,
    include_faq: true,
  }), (r) => `POST /v1/articles → article ${r.data.id} ${r.data.status}`);

  await step("article generated", async () => {
    const deadline = Date.now() + ARTICLE_TIMEOUT_MS;
    let last = created.data.status;
    while (Date.now() < deadline) {
      const { data } = await api<ArticleReply>(gatewayUrl, tenant.key, `/v1/articles/${created.data.id}`);
      if (data.status !== last) say(`  status ${data.status}`);
      last = data.status;
      if (data.status === "completed") return data;
      if (data.status === "failed") throw new Error(`the article failed: ${data.error_message ?? "no message"}`);
      await Bun.sleep(250);
    }
    throw new Error(`the article was still ${last} after ${seconds(ARTICLE_TIMEOUT_MS)}`);
  }, (a) => `${a.actual_word_count} words by ${a.ai_model_used}`);

  await step("run-time files", () => checkRunTimeFiles(gatewayUrl, gatewayAdminUrl, tokens.currentToken("operator")!, processes, containers), (checked) => checked);
}

/**
 * What the runtime stage keeps beside the bundles (deploy/container/runtime-files.sh), asked for
 * the way users and the cluster ask: the API reference's script, the queue dashboard's page and a
 * script of it, and each service's health through the TLS overlay's exec probe command.
 */
async function checkRunTimeFiles(gatewayUrl: string, adminUrl: string, operatorToken: string, processes: Process[], containers: Map<string, string>): Promise<string> {
  const get = async (url: string, headers: Record<string, string> = {}) => {
    const response = await fetch(url, { headers, signal: AbortSignal.timeout(10_000) });
    const body = await response.text();
    if (response.status !== 200 || !body.length) throw new Error(`GET ${url} answered ${response.status} with ${body.length} characters: ${body.slice(0, 200)}`);
    return body;
  };
  const reference = await get(`${gatewayUrl}/docs/assets/redoc.standalone.js`);
  const operator = { authorization: `Bearer ${operatorToken}` };
  const page = await get(`${adminUrl}/queues`, operator);
  const script = /src="(static\/js\/[^"]+\.js)"/.exec(page)?.[1];
  if (!script) throw new Error(`the queue dashboard's page names no script: ${page.slice(0, 300)}`);
  await get(`${adminUrl}/queues/${script}`, operator);
  // The command of deploy/k8s/overlays/production/grpc-tls.yaml's probes (cleartext here: no TLS_CERT_FILE).
  const probed = await Promise.all(processes.filter((p) => p.grpcPort).map(async (p) => {
    await run([...PODMAN, "exec", containers.get(p.name)!, "/app/node_modules/.bin/bun", "deploy/k8s/grpc-health-probe.ts", String(p.grpcPort), "liveness"]);
    return p.name;
  }));
  return `/docs/assets/redoc.standalone.js (${(reference.length / 1e6).toFixed(1)} MB), /queues and its ${script}, the TLS probe command healthy on ${probed.length} services`;
}

let failed = false;
try {
  await main();
} catch (error) {
  failed = true;
  if (!interrupted) say(`FAILED: ${(error as Error).message}`);
}
if (!interrupted) {
  await cleanUp();
  say(failed ? "smoke run failed" : "smoke run passed");
  process.exit(failed ? 1 : 0);
}
