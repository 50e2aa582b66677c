// `npm start` on a machine with no Postgres or Redis running starts private ones from the
// installed binaries, with their data under LOCAL_DATA_DIR kept between starts and stopped with
// the stack; without the binaries it names the packages to install. The machine's shared servers
// answer at the default addresses here, so LOCAL_SERVERS=always stands in for "nothing answers".
// Stopping is checked both ways: SIGINT to the launcher, and a process of the stack dying.
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, freeServicePort } from "../harness/ports.ts";
import type { Subprocess } from "bun";
import { SERVICE_URL_VARIABLES } from "../../services/kit/src/config.ts";
import { articleBody } from "../harness/articles.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const dataDirs: string[] = [];
const launched: Subprocess[] = [];

/** A data directory of the test's own; the private Postgres runs as `postgres` and must reach it. */
function dataDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "articles-local-"));
  chmodSync(dir, 0o755);
  dataDirs.push(dir);
  return dir;
}

/** `npm start` on free ports with DATABASE_URL and REDIS_URL unset and private servers in `dir`. */
async function launcherEnv(dir: string, overrides: Record<string, string | undefined> = {}): Promise<Record<string, string | undefined>> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    DATABASE_URL: undefined,
    REDIS_URL: undefined,
    REDIS_PREFIX: undefined,
    OPENAI_API_KEY: undefined,
    OPENAI_BASE_URL: undefined,
    PORT: String(await freeServicePort()),
    SIMULATOR_PORT: String(await freePort()),
    LOG_LEVEL: "silent",
    LOCAL_SERVERS: "always",
    LOCAL_DATA_DIR: dir,
  };
  for (const variable of Object.values(SERVICE_URL_VARIABLES)) env[variable] = `http://127.0.0.1:${await freeServicePort()}`;
  return { ...env, ...overrides };
}

function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return !stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return false;
  }
}

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

const pidIn = (file: string) => (existsSync(file) ? Number(readFileSync(file, "utf8").split("\n")[0].trim()) : 0);

interface Launcher {
  child: Subprocess<"ignore", "pipe", "pipe">;
  lines: string[];
  stderr: Promise<string>;
  baseUrl: string;
}

/** Starts the launcher and waits until it says the system is ready (or fails the test). */
async function launch(env: Record<string, string | undefined>): Promise<Launcher> {
  const child = Bun.spawn([process.execPath, "deploy/local/start.ts"], { cwd: root, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  launched.push(child);
  const stderr = new Response(child.stderr).text();
  const lines: string[] = [];
  const reader = child.stdout.getReader();
  const decoder = new TextDecoder();
  let pending = "";
  const deadline = Date.now() + 120_000;
  while (!lines.some((line) => line.startsWith("article generation service ready at"))) {
    const chunk = await Promise.race([reader.read(), Bun.sleep(Math.max(0, deadline - Date.now())).then(() => undefined)]);
    if (!chunk || chunk.done) {
      child.kill("SIGKILL");
      throw new Error(`the launcher did not become ready (exit ${await child.exited}):\n${lines.join("\n")}\n${await stderr}`);
    }
    pending += decoder.decode(chunk.value, { stream: true });
    const parts = pending.split("\n");
    pending = parts.pop()!;
    lines.push(...parts);
  }
  // Keeps reading so the launcher never blocks on a full pipe.
  void (async () => {
    while (!(await reader.read()).done);
  })().catch(() => {});
  return { child, lines, stderr, baseUrl: `http://127.0.0.1:${env.PORT}` };
}

/** SIGINT (Ctrl-C) to the launcher alone; its exit code. */
async function interrupt(launcher: Launcher): Promise<number> {
  launcher.child.kill("SIGINT");
  const timer = setTimeout(() => launcher.child.kill("SIGKILL"), 60_000);
  const code = await launcher.child.exited;
  clearTimeout(timer);
  return code;
}

afterAll(async () => {
  // A launcher a failed test left running stops its stack and servers as on Ctrl-C.
  for (const child of launched.filter((c) => c.exitCode === null && c.signalCode === null)) {
    child.kill("SIGINT");
    await Promise.race([child.exited, Bun.sleep(30_000)]);
  }
  for (const dir of dataDirs) {
    // A server a failed test left running is stopped before its directory goes.
    const postmaster = pidIn(join(dir, "postgres", "data", "postmaster.pid"));
    const redis = pidIn(join(dir, "redis", "redis.pid"));
    for (const [pid, signal] of [[postmaster, "SIGQUIT"], [redis, "SIGKILL"]] as const) {
      if (!pid || !alive(pid)) continue;
      process.kill(pid, signal);
      for (let i = 0; i < 100 && alive(pid); i++) await Bun.sleep(50);
    }
    rmSync(dir, { recursive: true, force: true });
  }
});

describe("npm start with no Postgres or Redis to use", () => {
  test("starts private ones with their data under LOCAL_DATA_DIR, stops them with the stack and finds the data again", async () => {
    const dir = dataDir();
    const env = await launcherEnv(dir);
    const pgPidFile = join(dir, "postgres", "data", "postmaster.pid");
    const redisPidFile = join(dir, "redis", "redis.pid");

    const first = await launch(env);
    const notice = (server: string) => new RegExp(`^LOCAL_SERVERS=always: started a private ${server} at 127\\.0\\.0\\.1:\\d+ with data in ${join(dir, server.toLowerCase())} \\(stopped with the stack\\)$`);
    expect(first.lines.filter((line) => notice("Postgres").test(line))).toHaveLength(1);
    expect(first.lines.filter((line) => notice("Redis").test(line))).toHaveLength(1);
    const created = first.lines.findIndex((line) => line.startsWith("first start: created a demo tenant"));
    expect(created).toBeGreaterThanOrEqual(0);
    const projectId = Number(/project (\d+)/.exec(first.lines[created])![1]);
    const headers = { authorization: `Bearer ${first.lines[created + 1].trim()}`, "content-type": "application/json" };

    const res = await fetch(`${first.baseUrl}/v1/articles`, { method: "POST", headers, body: JSON.stringify(articleBody(projectId, { title: "Kept between starts" })) });
    expect(res.status).toBe(201);
    const articleId = ((await res.json()) as { data: { id: number } }).data.id;
    const read = await fetch(`${first.baseUrl}/v1/articles/${articleId}`, { headers });
    expect(read.status).toBe(200);

    const servers = [pidIn(pgPidFile), pidIn(redisPidFile)];
    expect(servers.every((pid) => pid > 0 && alive(pid))).toBe(true);
    expect(await interrupt(first)).toBe(0);
    expect(servers.filter(alive)).toEqual([]);
    expect(existsSync(pgPidFile)).toBe(false);

    // The second start reuses the directories: the demo tenant, its key and the article are there.
    const second = await launch(env);
    expect(second.lines.some((line) => notice("Postgres").test(line))).toBe(true);
    expect(second.lines.some((line) => line.startsWith("first start:"))).toBe(false);
    const again = await fetch(`${second.baseUrl}/v1/articles/${articleId}`, { headers });
    expect(again.status).toBe(200);
    expect(((await again.json()) as { data: { title: string } }).data.title).toBe("Kept between starts");

    // A process of the stack that dies stops the rest, the private servers included.
    const running = [pidIn(pgPidFile), pidIn(redisPidFile)];
    const gateway = childrenOf(second.child.pid).find((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("gateway/"));
    expect(gateway).toBeDefined();
    process.kill(gateway!, "SIGKILL");
    const timer = setTimeout(() => second.child.kill("SIGKILL"), 60_000);
    expect(await second.child.exited).toBe(1);
    clearTimeout(timer);
    expect(running.filter((pid) => pid > 0 && alive(pid))).toEqual([]);
  }, 300_000);
});

describe("npm start without the server binaries", () => {
  /** Runs the launcher to its end: exit code and stderr lines. */
  async function run(env: Record<string, string | undefined>) {
    const child = Bun.spawn([process.execPath, "deploy/local/start.ts"], { cwd: root, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text(), new Response(child.stdout).text()]);
    clearTimeout(timer);
    return { code, lines: stderr.trim().split("\n").filter(Boolean) };
  }

  test("names both Debian packages in one line and exits non-zero, starting nothing", async () => {
    const dir = dataDir();
    // No redis-server on PATH, and PostgreSQL's binaries looked for in a directory that does not exist.
    const { code, lines } = await run(await launcherEnv(dir, { PATH: join(dir, "no-bin"), PG_BINDIR: join(dir, "no-postgresql") }));
    expect(code).not.toBe(0);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toStartWith("cannot start: ");
    expect(lines[0]).toContain("apt-get install postgresql redis-server");
    expect(readdirSync(dir)).toEqual([]);
  });

  test("names only the package that is missing", async () => {
    const dir = dataDir();
    const { code, lines } = await run(await launcherEnv(dir, { PATH: join(dir, "no-bin") }));
    expect(code).not.toBe(0);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("apt-get install redis-server)");
    expect(lines[0]).not.toContain("postgresql");
    expect(readdirSync(dir)).toEqual([]);
  });

  test("an unknown LOCAL_SERVERS is one line naming it", async () => {
    const { code, lines } = await run(await launcherEnv(dataDir(), { LOCAL_SERVERS: "sometimes" }));
    expect(code).not.toBe(0);
    expect(lines).toEqual([expect.stringMatching(/^cannot start: LOCAL_SERVERS: /)]);
  });
});
