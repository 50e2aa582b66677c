// What the real publishing sites of the tests (WordPress under php -S, Ghost under Node) share: a
// database and MariaDB user of their own on the local MariaDB, a temporary tree, a server in a
// process group of its own, and the sweep of whatever a killed run left behind. Every name a run
// makes starts with its prefix and the test process's pid, so the next run removes only leftovers
// of processes that are gone.
import { type ChildProcess, spawn, type SpawnOptions, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const hex = (bytes: number) => randomBytes(bytes).toString("hex");

function mariadb(sql: string): { ok: boolean; stdout: string; stderr: string } {
  const run = spawnSync("mysql", ["-uroot", "--batch", "--skip-column-names"], { input: sql, encoding: "utf8" });
  return { ok: run.status === 0, stdout: run.stdout ?? "", stderr: (run.stderr ?? "") || String(run.error ?? "") };
}

const dropDatabaseSql = (name: string) => `drop database if exists \`${name}\`; drop user if exists '${name}'@'localhost';`;

/** A database and a user of the same name that may do anything in it and nothing elsewhere. */
function createDatabase(name: string, password: string, what: string): void {
  const created = mariadb(
    `create database \`${name}\` character set utf8mb4 collate utf8mb4_unicode_ci;
     create user '${name}'@'localhost' identified by '${password}';
     grant all privileges on \`${name}\`.* to '${name}'@'localhost';`,
  );
  if (!created.ok) throw new Error(`could not create the ${what} database: ${created.stderr.trim()}`);
}

/** Whether the process that made a leftover still runs; a name that names no process is not the harness's to remove. */
const alive = (pid: number) => {
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
};

// A server runs in a process group of its own, so a stop reaches any worker it forked too.
function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

const exited = (child: ChildProcess) => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once("exit", () => resolve())));

/** The last lines a process wrote, kept so a failed start can say why; the pipes must be drained anyway. */
function tailOf(child: ChildProcess, lines = 30): () => string {
  const kept: string[] = [];
  const keep = (chunk: string) => {
    kept.push(...chunk.split("\n").filter(Boolean));
    kept.splice(0, Math.max(0, kept.length - lines));
  };
  child.stdout?.setEncoding("utf8").on("data", keep);
  child.stderr?.setEncoding("utf8").on("data", keep);
  return () => kept.join("\n");
}

export interface SiteLeftovers {
  /** Prefix of the databases and users of the harness's runs, e.g. "wp_harness_". */
  databasePrefix: string;
  /** Prefix of the trees in the temporary directory, e.g. "wordpress-harness-". */
  treePrefix: string;
  /** The file in a tree that holds its server's pid. */
  pidFile: string;
}

/** The server (a process group) a tree's run started, when that very process still runs (its command line or environment names the tree). */
function serverOf(tree: string, pidFile: string): number | undefined {
  const pid = Number(existsSync(join(tree, pidFile)) ? readFileSync(join(tree, pidFile), "utf8") : NaN);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    return [`/proc/${pid}/cmdline`, `/proc/${pid}/environ`].some((file) => readFileSync(file, "utf8").includes(tree)) ? pid : undefined;
  } catch {
    return undefined;
  }
}

function removeTree(tree: string, treePrefix: string): void {
  // Only ever a harness tree in the temporary directory.
  if (!tree.startsWith(join(tmpdir(), treePrefix))) return;
  rmSync(tree, { recursive: true, force: true });
}

/** Databases, users, trees and servers of harness runs whose process is gone. */
function sweepLeftovers({ databasePrefix, treePrefix, pidFile }: SiteLeftovers): void {
  const ownerOf = (name: string, prefix: string) => Number(name.slice(prefix.length).split(/[_-]/)[0]);
  const like = databasePrefix.replaceAll("_", "\\_");
  const databases = mariadb(`select schema_name from information_schema.schemata where schema_name like '${like}%'`);
  const users = mariadb(`select user from mysql.user where user like '${like}%'`);
  const names = new Set([...databases.stdout.split("\n"), ...users.stdout.split("\n")].map((s) => s.trim()).filter(Boolean));
  const gone = [...names].filter((name) => !alive(ownerOf(name, databasePrefix)));
  if (gone.length) mariadb(gone.map(dropDatabaseSql).join("\n"));
  for (const entry of readdirSync(tmpdir())) {
    if (!entry.startsWith(treePrefix) || alive(ownerOf(entry, treePrefix))) continue;
    const tree = join(tmpdir(), entry);
    const server = serverOf(tree, pidFile);
    if (server) killGroup(server, "SIGKILL");
    removeTree(tree, treePrefix);
  }
}

/** The local MariaDB, reachable as root over its socket, or an error saying what the tests need. */
export function requireMariaDb(what: string): void {
  const probe = mariadb("select 1");
  if (!probe.ok) throw new Error(`${what} tests need the local MariaDB, reachable as root over its socket (\`mysql -uroot\`): ${probe.stderr.trim()}`);
}

export const mariadbSocket = () => mariadb("select @@socket").stdout.trim();

/** One run of a site: its database and user, its tree, and the server started in it. */
export interface SiteRun {
  /** The database's name, also its user's. */
  database: string;
  dbPassword: string;
  /** The run's temporary directory. */
  tree: string;
  /** Starts the site's server in a process group of its own, its pid kept in the tree for a later sweep; `log` holds its last lines. */
  spawnServer(command: string, args: string[], options: SpawnOptions): { server: ChildProcess; log: () => string };
  /** Asks the server to stop (SIGTERM, SIGKILL after `graceMs`), then drops the database and its user and removes the tree. */
  stop(graceMs: number): Promise<void>;
  /** The same at once, as after a failed start. */
  abandon(): void;
}

/** Sweeps what killed runs left, then makes this run's database and tree, removed by stop(), abandon() or the test process's exit. */
export function openSiteRun(leftovers: SiteLeftovers, what: string): SiteRun {
  sweepLeftovers(leftovers);
  const database = `${leftovers.databasePrefix}${process.pid}_${hex(4)}`;
  const dbPassword = hex(16);
  createDatabase(database, dbPassword, what);
  const tree = mkdtempSync(join(tmpdir(), `${leftovers.treePrefix}${process.pid}-`));
  let server: ChildProcess | undefined;
  let stopped = false;
  const abandon = () => {
    if (stopped) return;
    stopped = true;
    process.off("exit", abandon);
    if (server?.pid) killGroup(server.pid, "SIGKILL");
    mariadb(dropDatabaseSql(database));
    removeTree(tree, leftovers.treePrefix);
  };
  // A test run that ends without stop() (a failed beforeAll, an interrupted run) still cleans up.
  process.on("exit", abandon);
  return {
    database,
    dbPassword,
    tree,
    spawnServer(command, args, options) {
      server = spawn(command, args, { ...options, detached: true });
      // Not a child the test run waits for: stop() or the exit hook ends it.
      server.unref();
      writeFileSync(join(tree, leftovers.pidFile), String(server.pid));
      return { server, log: tailOf(server) };
    },
    async stop(graceMs) {
      if (server?.pid && server.exitCode === null) {
        killGroup(server.pid, "SIGTERM");
        await Promise.race([exited(server), Bun.sleep(graceMs)]);
      }
      abandon();
    },
    abandon,
  };
}
