// A Postgres cluster and a Redis of their own, on temporary directories and free ports, for the
// runs that restart, stop or cut off the infrastructure under a stack (the fault tests, `npm run
// chaos`). The machine's shared Postgres and Redis are never touched. Whatever starts here is
// stopped by `cleanup()`, and also when the process exits without calling it.
// With a `dataDir`, the same servers keep their data in that directory between runs (`npm start`
// on a machine with no Postgres or Redis running, deploy/local/local-servers.ts).
import { spawnSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import postgres from "postgres";
import { GRPC_PORT_OFFSET, METRICS_PORT_OFFSET } from "../../services/kit/src/config.ts";

export interface PrivatePostgres {
  port: number;
  /** A URL for `database` on this cluster. */
  url(database: string): string;
  /** Fast shutdown and start again on the same port and data. */
  restart(): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Terminates the backends `where` selects from pg_stat_activity (other than the caller's); how many. */
  terminateBackends(where: string): Promise<number>;
  /** Stops the cluster and removes its directory (a `dataDir` is kept). */
  cleanup(): Promise<void>;
}

export interface PrivateRedis {
  port: number;
  url: string;
  /** Stops it and starts it again on the same port: empty, or with its data when it has a `dataDir`. */
  restart(): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
  cleanup(): Promise<void>;
}

export interface PrivateServerOptions {
  /**
   * A directory kept between runs, created on first use: the server's data survives stop(),
   * cleanup() and the process, and the next start with the same directory finds it again. The
   * server runs durably there. Without it, a temporary directory that cleanup() removes.
   */
  dataDir?: string;
  /** The port to listen on (127.0.0.1); a free one when unset. */
  port?: number;
}

/** The kernel's range for the source ports of outgoing connections. */
function outgoingPortRange(): [number, number] {
  try {
    const [low, high] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/).map(Number);
    if (low > 0 && high >= low) return [low, high];
  } catch {
    // Not Linux: its usual range.
  }
  return [32768, 60999];
}

/** Whether nothing listens on `port` on any address now. */
export const portFree = (port: number) =>
  new Promise<boolean>((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "0.0.0.0", () => server.close(() => resolve(true)));
  });

// Ports this process has handed out (a few hundred in a whole test run): nothing listens on them
// yet when the next one is picked, so only this record keeps two callers apart.
const handedOut = new Set<number>();
// Ports the processes derive from the one they are given: the gateway's metrics port (+1), a
// service's gRPC and metrics ports.
const DERIVED_OFFSETS = [1, GRPC_PORT_OFFSET, METRICS_PORT_OFFSET];
const clashes = (port: number) => handedOut.has(port) || DERIVED_OFFSETS.some((offset) => handedOut.has(port - offset) || handedOut.has(port + offset));

/**
 * A port nothing listens on, never handed out before by this process (nor one a handed-out port
 * derives its gRPC or metrics port from), picked outside the kernel's range for outgoing
 * connections' source ports. A port from that range (what listening on port 0 hands out) can be
 * taken by any connection made before the process meant to listen on it starts: a busy test run
 * lost a gateway's metrics port that way. The range ends 1,000 short of the outgoing one, so a
 * port plus its offsets stays clear of it too.
 */
export async function freePort(): Promise<number> {
  const [low, high] = outgoingPortRange();
  const [from, to] = low - 1_000 > 10_000 ? [10_000, low - 1_000] : [high + 1, 64_535];
  for (let tries = 0; tries < 1_000; tries++) {
    const port = from + Math.floor(Math.random() * (to - from + 1));
    if (clashes(port) || !(await portFree(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port between ${from} and ${to}`);
}

/** The bin directory of the machine's PostgreSQL server (PG_BINDIR overrides). */
function postgresBinDir(): string {
  if (process.env.PG_BINDIR) return process.env.PG_BINDIR;
  const fromConfig = spawnSync("pg_config", ["--bindir"], { encoding: "utf8" });
  const dir = fromConfig.status === 0 ? fromConfig.stdout.trim() : "";
  if (dir && existsSync(join(dir, "initdb"))) return dir;
  const versions = existsSync("/usr/lib/postgresql") ? readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a)) : [];
  for (const v of versions) if (existsSync(`/usr/lib/postgresql/${v}/bin/initdb`)) return `/usr/lib/postgresql/${v}/bin`;
  throw new Error("no PostgreSQL server binaries found (set PG_BINDIR to the directory holding initdb and pg_ctl)");
}

/**
 * The bin directory a private cluster in `dataDir` would run from, or undefined when the server
 * binaries are not installed (or PG_BINDIR names a directory without them). A kept cluster runs
 * only on the major version that created it, so that version is preferred when it is installed.
 */
export function findPostgresBinDir(dataDir?: string): string | undefined {
  const complete = (dir: string) => existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_ctl"));
  if (process.env.PG_BINDIR) return complete(process.env.PG_BINDIR) ? process.env.PG_BINDIR : undefined;
  const versionFile = dataDir ? join(resolve(dataDir), "data", "PG_VERSION") : undefined;
  if (versionFile && existsSync(versionFile)) {
    const dir = `/usr/lib/postgresql/${readFileSync(versionFile, "utf8").trim()}/bin`;
    if (complete(dir)) return dir;
  }
  try {
    const dir = postgresBinDir();
    return complete(dir) ? dir : undefined;
  } catch {
    return undefined;
  }
}

/** The redis-server on PATH, or undefined when it is not installed. */
export function findRedisServer(): string | undefined {
  return Bun.which("redis-server") ?? undefined;
}

// The server refuses to run as root: as root, the cluster belongs to and runs as `postgres`.
const asServerUser = (argv: string[]) => (process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--", ...argv] : argv);

async function run(argv: string[], what: string): Promise<void> {
  const child = Bun.spawn(argv, { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [status, out, err] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  if (status !== 0) throw new Error(`${what} failed (${status}): ${(err || out).trim()}`);
}

// Stops whatever is still running if the process ends without cleaning up.
const leftovers = new Set<() => void>();
process.on("exit", () => {
  for (const stop of leftovers) stop();
});

/** Runs `stop` (synchronously) if the process exits before the returned function is called. */
export function stopOnExit(stop: () => void): () => void {
  leftovers.add(stop);
  return () => leftovers.delete(stop);
}

export async function startPrivatePostgres(options: PrivateServerOptions = {}): Promise<PrivatePostgres> {
  const keep = options.dataDir !== undefined;
  const bin = keep ? findPostgresBinDir(options.dataDir) : postgresBinDir();
  if (!bin) throw new Error("no PostgreSQL server binaries found (set PG_BINDIR to the directory holding initdb and pg_ctl)");
  const dir = keep ? resolve(options.dataDir!) : mkdtempSync(join(tmpdir(), "articles-pg-"));
  if (keep) mkdirSync(dir, { recursive: true });
  const data = join(dir, "data");
  if (process.getuid?.() === 0) {
    chownSync(dir, uidOf("postgres"), gidOf("postgres"));
    chmodSync(dir, 0o700);
  }
  const port = options.port ?? (await freePort());
  const pgCtl = (...args: string[]) => asServerUser([join(bin, "pg_ctl"), "-D", data, ...args]);
  if (!existsSync(join(data, "PG_VERSION"))) {
    await run(asServerUser([join(bin, "initdb"), "-D", data, "-A", "trust", "-U", "postgres", ...(keep ? [] : ["--no-sync"])]), "initdb");
  } else if (keep && (await Bun.spawn(pgCtl("status"), { stdin: "ignore", stdout: "ignore", stderr: "ignore" }).exited) === 0) {
    // Still running after a run that was killed outright: stopped, then started on this run's port.
    await run(pgCtl("-w", "-t", "60", "-m", "fast", "stop"), "pg_ctl stop (left running by an earlier run)");
  }
  // A temporary cluster needs no durability: it lives for one test file or one chaos run.
  const serverOptions = keep
    ? `-p ${port} -k /tmp -c listen_addresses=127.0.0.1`
    : `-p ${port} -k /tmp -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off`;
  const start = async () => run(pgCtl("-l", join(dir, "server.log"), "-w", "-t", "30", "-o", serverOptions, "start"), "pg_ctl start");
  const stop = async () => run(pgCtl("-w", "-t", "30", "-m", "fast", "stop"), "pg_ctl stop");
  const url = (database: string) => `postgres://postgres@127.0.0.1:${port}/${database}`;
  const forget = () => {
    // A kept cluster shuts down cleanly and keeps its directory; a temporary one goes entirely.
    const [command, ...args] = pgCtl("-m", keep ? "fast" : "immediate", "stop");
    spawnSync(command, args, { stdio: "ignore" });
    if (!keep) rmSync(dir, { recursive: true, force: true });
  };
  const kept = stopOnExit(forget);
  try {
    await start();
  } catch (error) {
    forget();
    kept();
    throw error;
  }
  return {
    port,
    url,
    start,
    stop,
    async restart() {
      await stop();
      await start();
    },
    async terminateBackends(where) {
      const sql = postgres(url("postgres"), { max: 1, onnotice: () => {} });
      try {
        const rows = await sql.unsafe(`select pg_terminate_backend(pid) as done from pg_stat_activity where pid <> pg_backend_pid() and (${where})`);
        return rows.filter((r) => r.done).length;
      } finally {
        await sql.end({ timeout: 1 });
      }
    },
    async cleanup() {
      kept();
      forget();
    },
  };
}

export async function startPrivateRedis(options: PrivateServerOptions = {}): Promise<PrivateRedis> {
  const keep = options.dataDir !== undefined;
  const dir = keep ? resolve(options.dataDir!) : mkdtempSync(join(tmpdir(), "articles-redis-"));
  const pidFile = join(dir, "redis.pid");
  if (keep) {
    mkdirSync(dir, { recursive: true });
    await stopLeftoverRedis(pidFile);
  }
  const port = options.port ?? (await freePort());
  // A kept Redis writes every change to an append-only file (synced each second), so queued jobs
  // survive a stop or a crash; a temporary one keeps nothing.
  const persistence = keep ? ["--save", "", "--appendonly", "yes", "--appendfsync", "everysec", "--pidfile", pidFile] : ["--save", "", "--appendonly", "no"];
  let server: Subprocess | undefined;
  const start = async () => {
    server = Bun.spawn(["redis-server", "--port", String(port), "--bind", "127.0.0.1", ...persistence, "--dir", dir], { stdout: "ignore", stderr: "ignore" });
    const deadline = Date.now() + 10_000;
    while (!(await answersPing(port))) {
      if (server.exitCode !== null) throw new Error(`redis-server exited with code ${server.exitCode} on port ${port}`);
      if (Date.now() > deadline) throw new Error(`redis-server did not answer on port ${port}`);
      await Bun.sleep(50);
    }
  };
  const stop = async () => {
    if (!server || server.exitCode !== null) return;
    server.kill("SIGTERM");
    await server.exited;
  };
  const forget = () => {
    // SIGTERM lets a kept Redis write its last changes; it exits on its own after this process.
    if (server && server.exitCode === null) server.kill(keep ? "SIGTERM" : "SIGKILL");
    if (!keep) rmSync(dir, { recursive: true, force: true });
  };
  const kept = stopOnExit(forget);
  try {
    await start();
  } catch (error) {
    forget();
    kept();
    throw error;
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    start,
    stop,
    async restart() {
      await stop();
      await start();
    },
    async cleanup() {
      kept();
      await stop().catch(() => {});
      forget();
    },
  };
}

/** Stops a kept Redis that an earlier run left running (killed outright), so its data directory is free. */
async function stopLeftoverRedis(pidFile: string): Promise<void> {
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, "utf8").trim());
  const isRedis = () => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("redis-server");
    } catch {
      return false;
    }
  };
  // A pid file left by a crash may name an unrelated process by now: only a redis-server is stopped.
  if (!pid || !isRedis()) return;
  process.kill(pid, "SIGTERM");
  const deadline = Date.now() + 15_000;
  while (isRedis()) {
    if (Date.now() > deadline) throw new Error(`redis-server ${pid}, left running by an earlier run on ${pidFile}, did not stop`);
    await Bun.sleep(50);
  }
}

/** One PING over a plain socket: true once the server answers PONG. */
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once("error", () => done(false));
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.once("data", (reply) => done(reply.toString().startsWith("+PONG")));
  });
}

function idOf(flag: "-u" | "-g", user: string): number {
  const result = spawnSync("id", [flag, user], { encoding: "utf8" });
  if (result.status !== 0) throw new Error(`no '${user}' user to run the private Postgres as`);
  return Number(result.stdout.trim());
}
const uidOf = (user: string) => idOf("-u", user);
const gidOf = (user: string) => idOf("-g", user);
