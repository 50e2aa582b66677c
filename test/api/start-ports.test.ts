// No silent sharing of a port, no orphans: a gateway, a service or `npm start` started on a port
// another process holds stops with one line and a non-zero exit (the running stack keeps serving
// alone), and `npm start` stopped while it is still starting leaves no process behind.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { freePort, freeServicePort } from "../harness/ports.ts";
import type { Subprocess } from "bun";
import { SERVICE_URL_VARIABLES } from "../../services/kit/src/config.ts";
import { dropTestData, useStack, type TestStack } from "../harness/stack.ts";
import { eventually } from "../harness/eventually.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
let stack: TestStack;

beforeAll(async () => {
  stack = await useStack();
});

/** Settings for a whole `npm start` of its own on free ports. */
async function ownStackEnv(overrides: Record<string, string> = {}): Promise<Record<string, string>> {
  const env: Record<string, string> = {
    PORT: String(await freeServicePort()),
    SIMULATOR_PORT: String(await freePort()),
    DATABASE_URL: stack.databaseUrl,
    REDIS_PREFIX: `test-start-${randomBytes(3).toString("hex")}`,
    LOG_LEVEL: "silent",
  };
  for (const variable of Object.values(SERVICE_URL_VARIABLES)) env[variable] = `http://127.0.0.1:${await freeServicePort()}`;
  return { ...env, ...overrides };
}

function spawn(file: string, env: Record<string, string | undefined>): Subprocess<"ignore", "pipe", "pipe"> {
  return Bun.spawn([process.execPath, file], { cwd: root, env: { ...process.env, OPENAI_API_KEY: undefined, OPENAI_BASE_URL: undefined, ...env }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
}

/** Runs a process to its end; its exit code and the lines it wrote to stderr. */
async function run(file: string, env: Record<string, string | undefined>) {
  const child = spawn(file, env);
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text(), new Response(child.stdout).text()]);
  clearTimeout(timer);
  return { code, lines: stderr.trim().split("\n").filter(Boolean) };
}

async function stackServes(): Promise<void> {
  for (let i = 0; i < 5; i++) expect((await fetch(`${stack.baseUrl}/healthz`)).status).toBe(200);
}

describe("a port already in use is never shared", () => {
  test("a second gateway on the stack's PORT stops with one line and a non-zero exit", async () => {
    const { code, lines } = await run("gateway/src/main.ts", { ...stack.env, IDENTITY_TOKEN_FILE: await stack.identity.tokenFile("gateway") });
    expect(code).not.toBe(0);
    expect(lines.length).toBe(1);
    expect(lines[0]).toContain("PORT");
    expect(lines[0]).toContain(`port ${new URL(stack.baseUrl).port} is already in use`);
    await stackServes();
  });

  test("a second service on a taken Connect or gRPC port stops with one line and a non-zero exit", async () => {
    const connectPort = new URL(stack.env.WORKFLOW_CATALOG_URL).port;
    const grpcPort = new URL(stack.grpcUrls.workflowCatalog).port;
    for (const [ports, taken] of [
      [{ CONNECT_PORT: connectPort, GRPC_PORT: String(await freePort()) }, connectPort],
      [{ CONNECT_PORT: String(await freePort()), GRPC_PORT: grpcPort }, grpcPort],
    ] as const) {
      const { code, lines } = await run("services/workflow-catalog/src/main.ts", { ...stack.env, IDENTITY_TOKEN_FILE: await stack.identity.tokenFile("workflow-catalog"), ...ports });
      expect(code).not.toBe(0);
      expect(lines).toEqual([expect.stringContaining(`port ${taken} is already in use`)]);
    }
    await stackServes();
  });

  test("npm start on a taken port says which setting holds it, before starting anything", async () => {
    const cases: [string, Record<string, string>][] = [
      ["PORT", { PORT: new URL(stack.baseUrl).port }],
      ["ACCOUNTS_BILLING_URL", { ACCOUNTS_BILLING_URL: stack.env.ACCOUNTS_BILLING_URL }],
    ];
    for (const [variable, taken] of cases) {
      const { code, lines } = await run("deploy/local/start.ts", await ownStackEnv(taken));
      expect(code).not.toBe(0);
      expect(lines.length).toBe(1);
      expect(lines[0]).toStartWith(`cannot start: ${variable}: port `);
      expect(lines[0]).toContain("already in use");
    }
    await stackServes();
  });
});

/** The live (not zombie) processes whose parent is `pid`. */
function childrenOf(pid: number): number[] {
  const found: number[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const [state, parent] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(parent) === pid && state !== "Z") found.push(Number(entry));
    } catch {
      // the process ended while the list was read
    }
  }
  return found;
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return false;
  }
}

describe("npm start stopped while it is still starting", () => {
  const leftovers: [databaseUrl: string, redisPrefix: string][] = [];
  afterAll(async () => {
    for (const [databaseUrl, redisPrefix] of leftovers) await dropTestData(databaseUrl, redisPrefix);
  });

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    test(`${signal} to the launcher alone stops every process it started`, async () => {
      // A database of its own: migrating it keeps the services starting for a while.
      const databaseUrl = new URL(stack.databaseUrl);
      databaseUrl.pathname = `/articles_test_start_${randomBytes(4).toString("hex")}`;
      const env = await ownStackEnv({ DATABASE_URL: databaseUrl.toString() });
      leftovers.push([env.DATABASE_URL, env.REDIS_PREFIX]);
      const launcher = spawn("deploy/local/start.ts", env);
      const output = Promise.all([new Response(launcher.stdout).text(), new Response(launcher.stderr).text()]);
      let started: number[] = [];
      try {
        // Five services and the simulator start together; the gateway only once they are ready.
        started = await eventually(async () => childrenOf(launcher.pid), (pids) => pids.length >= 6 || launcher.exitCode !== null, 60_000, "the launcher's first processes");
        expect(launcher.exitCode).toBeNull();
        launcher.kill(signal);
        const code = await launcher.exited;
        expect(code).not.toBe(0);
        expect(started.filter(alive)).toEqual([]);
        const [stdout, stderr] = await output;
        expect(stdout).not.toContain("article generation service ready");
        expect(stderr).toContain("stopped before the system was ready");
      } finally {
        for (const pid of started.filter(alive)) process.kill(pid, "SIGKILL");
      }
    });
  }
});
