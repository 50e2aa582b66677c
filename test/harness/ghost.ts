// A real Ghost 5 for publishing tests: npm's `ghost` package (installed once, outside the checkout,
// by deploy/scripts/ensure-ghost.sh) run with Node on a free port, on a database and MariaDB user of
// its own and a content directory of its own in a temporary tree. Started, it is set up as a new
// site's owner would (the setup API, then a staff session), and the session adds a custom
// integration whose Admin API key the tests publish with. stop() removes all of it; whatever a
// killed run left behind is removed by the next start.
import { type ChildProcess, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, symlinkSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { freePort } from "./ports.ts";
import { hex, mariadbSocket, openSiteRun, requireMariaDb } from "./site-processes.ts";

/** The version deploy/scripts/ensure-ghost.sh installs. */
const GHOST_VERSION = "5.130.6";
const TREE_PREFIX = "ghost-harness-";
const DATABASE_PREFIX = "ghost_harness_";
const leftovers = { databasePrefix: DATABASE_PREFIX, treePrefix: TREE_PREFIX, pidFile: "ghost.pid" };
// A first boot creates Ghost's whole schema: half a minute on a quiet machine.
const BOOT_MS = 150_000;

export interface GhostSite {
  /** The site's address, e.g. http://127.0.0.1:41234 (no trailing slash). */
  url: string;
  /** The owner's login (an email address) and password. */
  email: string;
  password: string;
  /** A custom integration's Admin API key, "<id>:<secret>". */
  adminApiKey: string;
  /** Stops Ghost, drops the database and its user and removes the tree. */
  stop(): Promise<void>;
}

/** Where ensure-ghost.sh put the package (GHOST_CACHE_DIR, as for the script). */
export function ghostInstall(): string {
  const cache = process.env.GHOST_CACHE_DIR ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "article-service", "ghost");
  return join(cache, GHOST_VERSION);
}

function requireTools(install: string): void {
  if (!existsSync(join(install, ".installed"))) throw new Error(`Ghost tests need Ghost ${GHOST_VERSION} in ${install}: run \`bash deploy/scripts/ensure-ghost.sh\``);
  if (spawnSync("node", ["--version"]).status !== 0) throw new Error("Ghost tests start Ghost with `node` from PATH (Node 18, 20 or 22), and there is none");
  requireMariaDb("Ghost");
}

/** A content directory of the site's own (images, logs, settings), with the package's themes. */
function buildContent(install: string, content: string): void {
  for (const dir of ["data", "images", "files", "media", "logs", "settings", "adapters", "public", "themes"]) mkdirSync(join(content, dir), { recursive: true });
  const themes = join(install, "content", "themes");
  for (const theme of readdirSync(themes)) symlinkSync(join(themes, theme), join(content, "themes", theme));
}

/** Ghost's configuration, as its environment variables (nconf's `__` separator). */
function ghostEnv(o: { url: string; port: number; database: string; password: string; socket: string; content: string }): Record<string, string> {
  return {
    NODE_ENV: "production",
    url: o.url,
    server__host: "127.0.0.1",
    server__port: String(o.port),
    database__client: "mysql",
    database__connection__socketPath: o.socket,
    database__connection__user: o.database,
    database__connection__password: o.password,
    database__connection__database: o.database,
    paths__contentPath: o.content,
    // A new device's sign-in would otherwise wait on a code sent by email.
    security__staffDeviceVerification: "false",
    // No way out of the machine: no update checks, Gravatar lookups or mail.
    privacy__useTinfoil: "true",
    mail__transport: "stub",
    logging__transports: '["stdout"]',
    logging__level: "warn",
  };
}

async function waitUntilServing(url: string, ghost: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + BOOT_MS;
  while (Date.now() < deadline) {
    if (ghost.exitCode !== null) throw new Error(`Ghost exited with ${ghost.exitCode}: ${log()}`);
    try {
      const site = await fetch(`${url}/ghost/api/admin/site/`, { signal: AbortSignal.timeout(2_000) });
      await site.body?.cancel();
      if (site.ok) return;
    } catch {
      // not listening yet
    }
    await Bun.sleep(250);
  }
  throw new Error(`Ghost did not answer on ${url} within ${BOOT_MS / 1000} s: ${log()}`);
}

/** A call to the Admin API as the owner's browser makes it (Ghost wants the Origin of a staff session). */
async function adminCall(url: string, path: string, body: unknown, cookie = ""): Promise<Response> {
  const response = await fetch(`${url}/ghost/api/admin/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: url, ...(cookie ? { cookie } : {}) },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  if (!response.ok) throw new Error(`Ghost's ${path} answered ${response.status}: ${(await response.text()).slice(0, 400)}`);
  return response;
}

/** The owner made by the setup API, signed in, adds an integration; its Admin API key is what a destination holds. */
async function setUp(url: string, email: string, password: string): Promise<string> {
  await adminCall(url, "authentication/setup/", { setup: [{ name: "Publishing tests", email, password, blogTitle: "Publishing tests" }] });
  const session = await adminCall(url, "session/", { username: email, password });
  const cookie = session.headers.getSetCookie().map((c) => c.split(";")[0]).join("; ");
  // Read to its end: the session is stored as the answer finishes.
  await session.text();
  const made = await adminCall(url, "integrations/?include=api_keys", { integrations: [{ name: "Article service" }] }, cookie);
  const { integrations } = (await made.json()) as { integrations: { api_keys: { id: string; type: string; secret: string }[] }[] };
  const key = integrations[0]?.api_keys.find((k) => k.type === "admin");
  if (!key) throw new Error("Ghost made the integration without an Admin API key");
  // Ghost 5 shows an admin key's secret as the whole key ("<id>:<secret>").
  return key.secret.includes(":") ? key.secret : `${key.id}:${key.secret}`;
}

export async function startGhost(): Promise<GhostSite> {
  const install = ghostInstall();
  requireTools(install);
  const socket = mariadbSocket();
  const run = openSiteRun(leftovers, "Ghost");
  try {
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const content = join(run.tree, "content");
    buildContent(install, content);
    const { server: ghost, log } = run.spawnServer("node", ["index.js"], {
      cwd: install,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, ...ghostEnv({ url, port, database: run.database, password: run.dbPassword, socket, content }) },
    });
    await waitUntilServing(url, ghost, log);

    const email = "publisher@example.com";
    const password = `${hex(12)}-Aa1`;
    const adminApiKey = await setUp(url, email, password);
    return {
      url,
      email,
      password,
      adminApiKey,
      stop: () => run.stop(10_000),
    };
  } catch (error) {
    run.abandon();
    throw error;
  }
}
