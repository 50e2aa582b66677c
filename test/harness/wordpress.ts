// A real WordPress for publishing tests: Debian's WordPress served by `php -S` on a free port, on a
// database and MariaDB user of its own, from a temporary tree whose wp-config.php is its own (the
// machine's /etc/wordpress is never touched). stop() removes all of it; whatever a killed run left
// behind is removed by the next start.
import { type ChildProcess, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./ports.ts";
import { hex, mariadbSocket, openSiteRun, requireMariaDb } from "./site-processes.ts";

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

function requireTools(): void {
  const missing = [
    spawnSync("php", ["-m"], { encoding: "utf8" }).stdout?.includes("mysqli") ? "" : "php with mysqli",
    spawnSync("mysql", ["--version"]).status === 0 ? "" : "mysql client",
    existsSync(join(WORDPRESS, "wp-settings.php")) ? "" : WORDPRESS,
  ].filter(Boolean);
  if (missing.length) throw new Error(`${MISSING} (missing: ${missing.join(", ")})`);
  requireMariaDb("WordPress");
}

const leftovers = { databasePrefix: DATABASE_PREFIX, treePrefix: TREE_PREFIX, pidFile: "php.pid" };

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
  const socket = mariadbSocket();
  const run = openSiteRun(leftovers, "WordPress");
  try {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    buildTree(run.tree, wpConfig({ database: run.database, password: run.dbPassword, socket, url }));
    const { server: php, log } = run.spawnServer("php", ["-d", "opcache.enable_cli=1", "-S", `127.0.0.1:${port}`, "-t", run.tree, join(HELPERS, "router.php")], {
      stdio: ["ignore", "ignore", "pipe"],
      // WordPress calls itself over HTTP (the installer probes its own permalinks): one worker would wait on itself.
      env: { ...process.env, PHP_CLI_SERVER_WORKERS: "4" },
    });
    await waitUntilServing(url, php, log);

    const username = "publisher";
    const password = hex(12);
    await install(url, username, password, log);

    const made = spawnSync("php", [join(HELPERS, "site-setup.php"), run.tree, url, username, options.permalinks ?? "plain"], { encoding: "utf8" });
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
      stop: () => run.stop(5_000),
    };
  } catch (error) {
    run.abandon();
    throw error;
  }
}
