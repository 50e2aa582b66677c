// A real WordPress for publishing tests: Debian's WordPress served by `php -S` on a free port, on a
// database and MariaDB user of its own, from a temporary tree whose wp-config.php is its own (the
// machine's /etc/wordpress is never touched). stop() removes all of it; whatever a killed run left
// behind is removed by the next start.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./ports.ts";

const WORDPRESS = "/usr/share/wordpress";
const HELPERS = fileURLToPath(new URL("./wordpress/", import.meta.url));
const TREE_PREFIX = "wordpress-harness-";
const DATABASE_PREFIX = "wp_harness_";
const MISSING = "WordPress tests need Debian's wordpress, php-cli and php-mysql packages: run `bash deploy/scripts/ensure-wordpress.sh` (apt-get install wordpress php-cli php-mysql)";

export interface WordPressSite {
  /** The site's home, e.g. http://127.0.0.1:41234 (no trailing slash). */
  url: string;
  /** The REST API root the site announces: `…/?rest_route=/` with plain permalinks, `…/wp-json/` with pretty ones. */
  restRoot: string;
  /** The administrator's login. */
  username: string;
  /** The administrator's login password (for wp-login.php; the REST API takes the application password). */
  password: string;
  /** An application password of the administrator, for HTTP Basic auth on the REST API. */
  applicationPassword: string;
  /** Stops PHP, drops the database and its user and removes the tree. */
  stop(): Promise<void>;
}

const hex = (bytes: number) => randomBytes(bytes).toString("hex");

function mariadb(sql: string): { ok: boolean; stdout: string; stderr: string } {
  const run = spawnSync("mysql", ["-uroot", "--batch", "--skip-column-names"], { input: sql, encoding: "utf8" });
  return { ok: run.status === 0, stdout: run.stdout ?? "", stderr: (run.stderr ?? "") || String(run.error ?? "") };
}

function requireTools(): void {
  const missing = [
    spawnSync("php", ["-m"], { encoding: "utf8" }).stdout?.includes("mysqli") ? "" : "php with mysqli",
    spawnSync("mysql", ["--version"]).status === 0 ? "" : "mysql client",
    existsSync(join(WORDPRESS, "wp-settings.php")) ? "" : WORDPRESS,
  ].filter(Boolean);
  if (missing.length) throw new Error(`${MISSING} (missing: ${missing.join(", ")})`);
  const probe = mariadb("select 1");
  if (!probe.ok) throw new Error(`WordPress tests need the local MariaDB, reachable as root over its socket (\`mysql -uroot\`): ${probe.stderr.trim()}`);
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

/** The PHP server (a process group) a tree's run started, when that very process still runs (its command line names the tree). */
function phpServerOf(tree: string): number | undefined {
  const pid = Number(existsSync(join(tree, "php.pid")) ? readFileSync(join(tree, "php.pid"), "utf8") : NaN);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(tree) ? pid : undefined;
  } catch {
    return undefined;
  }
}

function removeTree(tree: string): void {
  // Only ever a harness tree in the temporary directory.
  if (!tree.startsWith(join(tmpdir(), TREE_PREFIX))) return;
  rmSync(tree, { recursive: true, force: true });
}

const dropSql = (name: string) => `drop database if exists \`${name}\`; drop user if exists '${name}'@'localhost';`;

/** Databases, users, trees and PHP servers of harness runs whose process is gone. */
function sweepLeftovers(): void {
  const ownerOf = (name: string, prefix: string) => Number(name.slice(prefix.length).split(/[_-]/)[0]);
  const databases = mariadb(`select schema_name from information_schema.schemata where schema_name like '${DATABASE_PREFIX.replaceAll("_", "\\_")}%'`);
  const users = mariadb(`select user from mysql.user where user like '${DATABASE_PREFIX.replaceAll("_", "\\_")}%'`);
  const names = new Set([...databases.stdout.split("\n"), ...users.stdout.split("\n")].map((s) => s.trim()).filter(Boolean));
  const gone = [...names].filter((name) => !alive(ownerOf(name, DATABASE_PREFIX)));
  if (gone.length) mariadb(gone.map(dropSql).join("\n"));
  for (const entry of readdirSync(tmpdir())) {
    if (!entry.startsWith(TREE_PREFIX) || alive(ownerOf(entry, TREE_PREFIX))) continue;
    const tree = join(tmpdir(), entry);
    const php = phpServerOf(tree);
    if (php) killGroup(php, "SIGKILL");
    removeTree(tree);
  }
}

/** The served tree: Debian's WordPress by symlink, with a wp-config.php and a writable wp-content of its own. */
function buildTree(tree: string, config: string): void {
  for (const entry of readdirSync(WORDPRESS)) {
    if (entry === "wp-config.php" || entry === "wp-content") continue;
    symlinkSync(join(WORDPRESS, entry), join(tree, entry));
  }
  const content = join(tree, "wp-content");
  mkdirSync(join(content, "uploads"), { recursive: true });
  for (const entry of readdirSync(join(WORDPRESS, "wp-content"))) symlinkSync(join(WORDPRESS, "wp-content", entry), join(content, entry));
  writeFileSync(join(tree, "wp-config.php"), config);
}

function wpConfig(o: { database: string; password: string; socket: string; url: string }): string {
  const salts = ["AUTH_KEY", "SECURE_AUTH_KEY", "LOGGED_IN_KEY", "NONCE_KEY", "AUTH_SALT", "SECURE_AUTH_SALT", "LOGGED_IN_SALT", "NONCE_SALT"];
  return `<?php
define('DB_NAME', '${o.database}');
define('DB_USER', '${o.database}');
define('DB_PASSWORD', '${o.password}');
define('DB_HOST', 'localhost:${o.socket}');
define('DB_CHARSET', 'utf8mb4');
define('DB_COLLATE', '');
${salts.map((k) => `define('${k}', '${hex(24)}');`).join("\n")}
$table_prefix = 'wp_';
define('WP_HOME', '${o.url}');
define('WP_SITEURL', '${o.url}');
// Application passwords over plain http are only offered on a local environment.
define('WP_ENVIRONMENT_TYPE', 'local');
// The machine has no way out: update checks and cron's loopback requests would only wait.
define('WP_HTTP_BLOCK_EXTERNAL', true);
define('DISABLE_WP_CRON', true);
define('AUTOMATIC_UPDATER_DISABLED', true);
define('WP_DEBUG', false);
define('FS_METHOD', 'direct');
require_once ABSPATH . 'wp-settings.php';
`;
}

/** The last lines a process wrote, kept so a failed start can say why; the pipe must be drained anyway. */
function tailOf(child: ChildProcess, lines = 30): () => string {
  const kept: string[] = [];
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    kept.push(...chunk.split("\n").filter(Boolean));
    kept.splice(0, Math.max(0, kept.length - lines));
  });
  return () => kept.join("\n");
}

// php -S runs in a process group of its own, so a stop reaches any worker it forked too.
function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

const exited = (child: ChildProcess) => new Promise<void>((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve() : child.once("exit", () => resolve())));

// The harness reads the REST root on its own, so a test checks the client's discovery against
// what WordPress announced rather than against the client itself.
/** The URL of a `Link` header entry with rel="https://api.w.org/". */
function apiRootOf(link: string | null): string | undefined {
  for (const entry of (link ?? "").split(/,\s*(?=<)/)) {
    const match = /^<([^>]*)>(.*)$/.exec(entry.trim());
    if (match && /;\s*rel="?https:\/\/api\.w\.org\/"?/.test(match[2]!)) return match[1];
  }
  return undefined;
}

async function waitUntilServing(url: string, php: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (php.exitCode !== null) throw new Error(`php -S exited with ${php.exitCode}: ${log()}`);
    try {
      await fetch(`${url}/wp-includes/version.php`, { signal: AbortSignal.timeout(1_000) });
      return;
    } catch {
      await Bun.sleep(50);
    }
  }
  throw new Error(`php -S did not answer on ${url} within 15 s: ${log()}`);
}

async function install(url: string, username: string, password: string, log: () => string): Promise<void> {
  const form = new URLSearchParams({
    weblog_title: "Publishing tests",
    user_name: username,
    admin_password: password,
    admin_password2: password,
    pw_weak: "1",
    admin_email: "publishing-tests@example.com",
    blog_public: "0",
  });
  const response = await fetch(`${url}/wp-admin/install.php?step=2`, { method: "POST", body: form, signal: AbortSignal.timeout(60_000) });
  const page = await response.text();
  if (!response.ok || !/<h1[^>]*>\s*Success!/i.test(page)) {
    const said = page.replace(/<[^>]*>/g, " ").replace(/\s+/g, " ").slice(0, 400);
    throw new Error(`WordPress install answered ${response.status}: ${said} ${log()}`);
  }
}

export interface WordPressOptions {
  /** Plain permalinks (the REST API under `?rest_route=`, the default) or pretty ones (`/wp-json/`). */
  permalinks?: "plain" | "pretty";
}

export async function startWordPress(options: WordPressOptions = {}): Promise<WordPressSite> {
  requireTools();
  sweepLeftovers();

  const database = `${DATABASE_PREFIX}${process.pid}_${hex(4)}`;
  const dbPassword = hex(16);
  const socket = mariadb("select @@socket").stdout.trim();
  const created = mariadb(
    `create database \`${database}\` character set utf8mb4 collate utf8mb4_unicode_ci;
     create user '${database}'@'localhost' identified by '${dbPassword}';
     grant all privileges on \`${database}\`.* to '${database}'@'localhost';`,
  );
  if (!created.ok) throw new Error(`could not create the WordPress database: ${created.stderr.trim()}`);

  const tree = mkdtempSync(join(tmpdir(), `${TREE_PREFIX}${process.pid}-`));
  let php: ChildProcess | undefined;
  let stopped = false;
  const stopNow = () => {
    if (stopped) return;
    stopped = true;
    process.off("exit", stopNow);
    if (php?.pid) killGroup(php.pid, "SIGKILL");
    mariadb(dropSql(database));
    removeTree(tree);
  };
  // A test run that ends without stop() (a failed beforeAll, an interrupted run) still cleans up.
  process.on("exit", stopNow);

  try {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    buildTree(tree, wpConfig({ database, password: dbPassword, socket, url }));
    php = spawn("php", ["-d", "opcache.enable_cli=1", "-S", `127.0.0.1:${port}`, "-t", tree, join(HELPERS, "router.php")], {
      detached: true,
      stdio: ["ignore", "ignore", "pipe"],
      // WordPress calls itself over HTTP (the installer probes its own permalinks): one worker would wait on itself.
      env: { ...process.env, PHP_CLI_SERVER_WORKERS: "4" },
    });
    // Not a child the test run waits for: stop() or the exit hook ends it.
    php.unref();
    writeFileSync(join(tree, "php.pid"), String(php.pid));
    const log = tailOf(php);
    await waitUntilServing(url, php, log);

    const username = "publisher";
    const password = hex(12);
    await install(url, username, password, log);

    const made = spawnSync("php", [join(HELPERS, "site-setup.php"), tree, url, username, options.permalinks ?? "plain"], { encoding: "utf8" });
    if (made.status !== 0 || !made.stdout.trim()) throw new Error(`could not set the site up: ${made.stderr.trim()}`);
    const applicationPassword = made.stdout.trim();

    const home = await fetch(`${url}/`, { signal: AbortSignal.timeout(30_000) });
    await home.body?.cancel();
    const restRoot = apiRootOf(home.headers.get("link"));
    if (!restRoot) throw new Error(`the WordPress home page announced no REST API (Link: ${home.headers.get("link")})`);

    return {
      url,
      restRoot,
      username,
      password,
      applicationPassword,
      async stop() {
        const server = php;
        if (server?.pid && server.exitCode === null) {
          killGroup(server.pid, "SIGTERM");
          await Promise.race([exited(server), Bun.sleep(5_000)]);
        }
        stopNow();
      },
    };
  } catch (error) {
    stopNow();
    throw error;
  }
}
