// Migrations once per release: `<service> --migrate` (the manifests' migration Job) applies a
// service's migrations and exits, needing only DATABASE_URL; a process started with
// MIGRATIONS=verify refuses, in one line, a schema older than it needs, and serves once the Job ran.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { eventually } from "../harness/eventually.ts";
import { freePort } from "../harness/ports.ts";
import { useStack, type TestStack } from "../harness/stack.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const ENTRY = "services/workflow-catalog/src/main.ts";
let stack: TestStack;
let databaseUrl: string;

beforeAll(async () => {
  stack = await useStack();
  const url = new URL(stack.databaseUrl);
  url.pathname = `/articles_migrate_${process.pid}_${randomBytes(3).toString("hex")}`;
  databaseUrl = url.toString();
  const admin = postgres(stack.databaseUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${url.pathname.slice(1)}"`);
  await admin.end();
});

afterAll(async () => {
  const admin = postgres(stack.databaseUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists "${new URL(databaseUrl).pathname.slice(1)}" with (force)`);
  await admin.end();
});

async function run(args: string[], env: Record<string, string | undefined>) {
  const child = Bun.spawn([process.execPath, ENTRY, ...args], { cwd: root, env: { ...process.env, LOG_LEVEL: "silent", ...env }, stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text(), new Response(child.stdout).text()]);
  clearTimeout(timer);
  return { code, lines: stderr.trim().split("\n").filter(Boolean) };
}

describe("migrations once per release", () => {
  test("a verifying process refuses an unmigrated schema; --migrate applies it; then the process serves", async () => {
    const serviceEnv = async () => ({ ...stack.env, DATABASE_URL: databaseUrl, MIGRATIONS: "verify", IDENTITY_TOKEN_FILE: await stack.identity.tokenFile("workflow-catalog"), CONNECT_PORT: String(await freePort()), GRPC_PORT: String(await freePort()), METRICS_PORT: "0" });
    const refused = await run([], await serviceEnv());
    expect(refused.code).not.toBe(0);
    expect(refused.lines.length).toBe(1);
    expect(refused.lines[0]).toMatch(/^workflow-catalog: the workflow_catalog schema lacks \d+ migration\(s\) this release needs; run the release's migration Job first/);

    // The Job's container: only the database address, no identity, no ports.
    const migrated = await run(["--migrate"], { DATABASE_URL: databaseUrl, IDENTITY_TOKEN_FILE: undefined, IDENTITY_JWKS: undefined });
    expect(migrated).toEqual({ code: 0, lines: [] });
    // Run again (a second release with nothing new, or a retried Job): nothing to do, still 0.
    expect((await run(["--migrate"], { DATABASE_URL: databaseUrl })).code).toBe(0);

    const env = await serviceEnv();
    const serving = Bun.spawn([process.execPath, ENTRY], { cwd: root, env: { ...process.env, ...env, LOG_LEVEL: "silent" }, stdout: "ignore", stderr: "pipe" });
    try {
      const health = () => fetch(`http://127.0.0.1:${env.CONNECT_PORT}/grpc.health.v1.Health/Check`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }).then((r) => r.status, () => 0);
      await eventually(health, (status) => status === 200, 20_000, "the verifying process to serve");
    } finally {
      serving.kill("SIGTERM");
      await serving.exited;
    }
  }, 60_000);

  test("every service migrates with DATABASE_URL alone, as the Job's containers run", async () => {
    for (const service of ["accounts-billing", "workflow-catalog", "article-store", "generation-runner", "webhook-dispatcher"]) {
      const child = Bun.spawn([process.execPath, `services/${service}/src/main.ts`, "--migrate"], {
        cwd: root,
        // Nothing of the stack's: no identity, no webhook key, no provider.
        env: { PATH: process.env.PATH, HOME: process.env.HOME, DATABASE_URL: databaseUrl, LOG_LEVEL: "silent" },
        stdout: "ignore",
        stderr: "pipe",
      });
      const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
      expect({ service, code, stderr }).toEqual({ service, code: 0, stderr: "" });
    }
  }, 60_000);

  test("MIGRATIONS takes apply or verify only", async () => {
    const { code, lines } = await run([], { ...stack.env, MIGRATIONS: "skip", IDENTITY_TOKEN_FILE: await stack.identity.tokenFile("workflow-catalog") });
    expect(code).not.toBe(0);
    expect(lines).toEqual(['configuration error: MIGRATIONS: expected apply or verify, got "skip"']);
  });
});
