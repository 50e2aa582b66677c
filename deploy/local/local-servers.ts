// `npm start` on a fresh machine: when DATABASE_URL or REDIS_URL is left unset and nothing answers
// at its default address, a private Postgres or Redis is started from the machine's installed
// binaries, with its data kept under LOCAL_DATA_DIR (.local/ in the repository) between starts,
// and stopped with the stack. Anything that answers at the configured addresses is used as it is.
import { connect, createServer } from "node:net";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigError, envString, loadDataStores } from "../../services/kit/src/config.ts";
import { findPostgresBinDir, findRedisServer, freePort, startPrivatePostgres, startPrivateRedis, type PrivatePostgres, type PrivateRedis } from "./private-servers.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const MODES = ["auto", "always", "never"] as const;

export interface LocalServers {
  /** Stops the private servers started here (their data stays); nothing when none was started. */
  stop(): Promise<void>;
}

/** Whether something accepts a TCP connection at host:port (a server answers there). */
function answers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once("error", () => done(false));
    socket.once("connect", () => done(true));
  });
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen({ port, host: "127.0.0.1", exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** The server's usual port when it is free, else any free one. */
async function portFor(usual: number): Promise<number> {
  return (await portFree(usual)) ? usual : freePort();
}

const isSet = (env: Record<string, string>, name: string) => (env[name] ?? "").trim() !== "";
const shown = (dir: string) => (dir.startsWith(root) ? relative(root, dir) || "." : dir);

/**
 * Starts what is missing and points env's DATABASE_URL / REDIS_URL at it (env is changed in
 * place). LOCAL_SERVERS=auto (default) starts a server only when its URL is unset and nothing
 * answers at the default address; `always` also when something does; `never` starts none. An
 * explicitly set URL is always used as given.
 */
export async function startLocalServers(env: Record<string, string>, notify: (line: string) => void, signal?: AbortSignal): Promise<LocalServers> {
  const mode = envString(env, "LOCAL_SERVERS", "auto") as (typeof MODES)[number];
  if (!MODES.includes(mode)) throw new ConfigError("LOCAL_SERVERS", `expected one of ${MODES.join(", ")}, got "${mode}"`);
  if (mode === "never") return { async stop() {} };
  const dataRoot = resolve(envString(env, "LOCAL_DATA_DIR", join(root, ".local")));
  const defaults = loadDataStores(env);
  const pgDefault = new URL(defaults.databaseUrl);
  const redisDefault = new URL(defaults.redisUrl);
  const pgAddress = `${pgDefault.hostname}:${Number(pgDefault.port || 5432)}`;
  const redisAddress = `${redisDefault.hostname}:${Number(redisDefault.port || 6379)}`;

  // Why each server is needed, or undefined when the configured one is used.
  const reason = async (variable: string, url: URL, usual: number, what: string, address: string) => {
    if (isSet(env, variable)) return undefined;
    if (mode === "always") return "LOCAL_SERVERS=always";
    return (await answers(url.hostname, Number(url.port || usual))) ? undefined : `no ${what} at ${address}`;
  };
  const pgReason = await reason("DATABASE_URL", pgDefault, 5432, "Postgres", pgAddress);
  const redisReason = await reason("REDIS_URL", redisDefault, 6379, "Redis", redisAddress);

  // Both checked before either starts: one line names every package still to install.
  const pgDir = join(dataRoot, "postgres");
  const redisDir = join(dataRoot, "redis");
  const missing: { why: string; server: string; pkg: string; variable: string }[] = [];
  if (pgReason && !findPostgresBinDir(pgDir)) missing.push({ why: pgReason, server: "PostgreSQL", pkg: "postgresql", variable: "DATABASE_URL" });
  if (redisReason && !findRedisServer()) missing.push({ why: redisReason, server: "Redis", pkg: "redis-server", variable: "REDIS_URL" });
  if (missing.length > 0) {
    const list = (key: "why" | "server" | "pkg" | "variable", separator = " and ") => missing.map((m) => m[key]).join(separator);
    const lead = mode === "always" ? "LOCAL_SERVERS=always starts private servers" : list("why");
    const pgBinDir = missing.some((m) => m.pkg === "postgresql") && process.env.PG_BINDIR ? ` (PG_BINDIR=${process.env.PG_BINDIR} has no initdb and pg_ctl)` : "";
    throw new Error(
      `${lead}, but the ${list("server")} server binaries are not installed${pgBinDir}: ` +
        `install the Debian package${missing.length > 1 ? "s" : ""} ${list("pkg", " ")} (apt-get install ${list("pkg", " ")}), ` +
        `or set ${list("variable")} to ${missing.length > 1 ? "running servers" : "a running server"}`,
    );
  }
  // "no Postgres at …: started a private one", or "LOCAL_SERVERS=always: started a private Postgres".
  const noun = (what: string) => (mode === "always" ? what : "one");

  let postgres: PrivatePostgres | undefined;
  let redis: PrivateRedis | undefined;
  const stop = async () => {
    await redis?.cleanup().catch(() => {});
    await postgres?.cleanup().catch(() => {});
  };
  try {
    if (pgReason) {
      postgres = await startPrivatePostgres({ dataDir: pgDir, port: await portFor(Number(pgDefault.port || 5432)) });
      const database = decodeURIComponent(pgDefault.pathname.replace(/^\//, "")) || "postgres";
      env.DATABASE_URL = postgres.url(database);
      notify(`${pgReason}: started a private ${noun("Postgres")} at 127.0.0.1:${postgres.port} with data in ${shown(pgDir)} (stopped with the stack)`);
    }
    if (signal?.aborted) throw new Error("stopped while starting");
    if (redisReason) {
      redis = await startPrivateRedis({ dataDir: redisDir, port: await portFor(Number(redisDefault.port || 6379)) });
      env.REDIS_URL = redis.url;
      notify(`${redisReason}: started a private ${noun("Redis")} at 127.0.0.1:${redis.port} with data in ${shown(redisDir)} (stopped with the stack)`);
    }
    if (signal?.aborted) throw new Error("stopped while starting");
  } catch (error) {
    await stop();
    throw error;
  }
  return { stop };
}
