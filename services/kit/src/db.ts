// Postgres through drizzle-orm: creates the database when missing and applies the service's own
// migrations, tracked in its own schema so services never touch each other's tables.
import postgres from "postgres";
import { drizzle } from "drizzle-orm/postgres-js";
import { migrate } from "drizzle-orm/postgres-js/migrator";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { existsSync } from "node:fs";
import { redactUrl } from "./config.ts";

export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, "")) || "postgres";
  url.pathname = "/postgres";
  const admin = postgres(url.toString(), { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    const rows = await admin`select 1 from pg_database where datname = ${name}`;
    if (rows.length === 0) {
      try {
        await admin.unsafe(`create database "${name.replace(/"/g, '""')}"`);
      } catch (error) {
        // Another process created it first (services start in parallel).
        if ((error as { code?: string }).code !== "42P04" && (error as { code?: string }).code !== "23505") throw error;
      }
    }
  } catch (error) {
    throw new Error(`DATABASE_URL: cannot reach ${redactUrl(databaseUrl)} (${(error as Error).message})`);
  } finally {
    await admin.end({ timeout: 1 });
  }
}

/**
 * The client drizzle runs on, with every parameterised statement prepared once per connection.
 * drizzle sends its queries unprepared, so Postgres parsed and planned each one again: about half
 * of its CPU per statement on the hot paths (docs/performance-history.md, item 2). Statement texts come from the
 * code's query shapes (values always travel as parameters), so the per-connection statement
 * cache stays small. Transactions and savepoints get a client that prepares the same way.
 */
function preparingClient(sql: postgres.Sql): postgres.Sql {
  return new Proxy(sql, {
    get(target, property, receiver) {
      if (property === "unsafe") {
        return (query: string, args: unknown[] = [], options: Record<string, unknown> = {}) =>
          target.unsafe(query, args as postgres.ParameterOrJSON<never>[], { ...options, prepare: args.length > 0 });
      }
      if (property === "begin" || property === "savepoint") {
        return (...params: unknown[]) => {
          const body = params.pop() as (client: postgres.Sql) => unknown;
          const run = Reflect.get(target, property, receiver) as (...a: unknown[]) => unknown;
          return run.call(target, ...params, (client: postgres.Sql) => body(preparingClient(client)));
        };
      }
      return Reflect.get(target, property, receiver);
    },
  });
}

/**
 * How the service's pool meets an outage: a connection that cannot be made fails within 3 s
 * (before its callers' deadlines, so they hear UNAVAILABLE), and the wait between attempts,
 * up to 20 s in postgres.js after a long outage, is capped at 2 s so queries flow again within
 * seconds of Postgres answering.
 */
export const CONNECTION_OPTIONS = {
  connect_timeout: 3,
  backoff: (retries: number) => (0.5 + Math.random() / 2) * Math.min(0.05 * 2 ** retries, 2),
} satisfies postgres.Options<Record<string, never>>;

// What a lost or refused connection looks like: postgres.js's own codes, the socket's, and the
// server's SQLSTATEs for a server that is shutting down, starting up or out of connections.
const OUTAGE_CODES = new Set([
  "CONNECTION_CLOSED", "CONNECTION_DESTROYED", "CONNECTION_ENDED", "CONNECT_TIMEOUT",
  "ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "EAI_AGAIN", "ENOTFOUND",
  "57P01", "57P02", "57P03", "53300",
]);

/**
 * When `error` (or what it wraps, as drizzle does) says Postgres could not be reached rather than
 * that a query was wrong: the connection's own message, without the query or its parameters.
 */
export function databaseOutageOf(error: unknown): string | undefined {
  for (let e = error, depth = 0; e && typeof e === "object" && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && (OUTAGE_CODES.has(code) || code.startsWith("08"))) return `${code}: ${(e as { message?: string }).message ?? ""}`;
  }
  return undefined;
}

export interface ServiceDatabase<S extends Record<string, unknown>> {
  db: ReturnType<typeof drizzle<S>>;
  sql: postgres.Sql;
  close(): Promise<void>;
}

/**
 * What a process does with its schema at start (MIGRATIONS): `apply` its migrations (the default:
 * `npm start`, a single replica), or `verify` that a migration Job of this release already applied
 * them and refuse to start on an older schema (Kubernetes: many replicas of a new release start
 * while the old one still serves, and none of them should change the schema under it).
 */
export type MigrationMode = "apply" | "verify";

/** Thrown at start when the schema lacks migrations this release needs (MIGRATIONS=verify). */
export class SchemaBehindError extends Error {}

export async function openServiceDatabase<S extends Record<string, unknown>>(opts: {
  databaseUrl: string;
  schemaName: string;
  schema: S;
  migrationsFolder: string;
  poolSize?: number;
  migrations?: MigrationMode;
}): Promise<ServiceDatabase<S>> {
  if (opts.migrations !== "verify") await ensureDatabase(opts.databaseUrl);
  const sql = postgres(opts.databaseUrl, { max: opts.poolSize ?? 10, onnotice: () => {}, ...CONNECTION_OPTIONS });
  const db = drizzle(preparingClient(sql), { schema: opts.schema });
  if (opts.migrations === "verify") {
    try {
      await verifySchema(sql, opts.schemaName, opts.migrationsFolder);
    } catch (error) {
      await sql.end({ timeout: 1 });
      throw error;
    }
  } else if (existsSync(opts.migrationsFolder)) {
    // Replicas starting together migrate one at a time: the lock is held on a reserved connection
    // of a client of its own, beside the one migrating (whatever DATABASE_POOL_SIZE is).
    const migrating = postgres(opts.databaseUrl, { max: 2, onnotice: () => {}, ...CONNECTION_OPTIONS });
    const lock = await migrating.reserve();
    try {
      await lock`select pg_advisory_lock(hashtext(${"migrate:" + opts.schemaName}))`;
      await migrate(drizzle(migrating), {
        migrationsFolder: opts.migrationsFolder,
        // Kept beside (not inside) the service schema, whose first migration creates it.
        migrationsSchema: `${opts.schemaName}_migrations`,
        migrationsTable: "applied",
      });
    } finally {
      await lock`select pg_advisory_unlock(hashtext(${"migrate:" + opts.schemaName}))`;
      lock.release();
      await migrating.end({ timeout: 5 });
    }
  }
  return { db, sql, close: () => sql.end({ timeout: 5 }) };
}

/** Fails with SchemaBehindError naming the newest missing migration when the schema is older than the folder's. */
async function verifySchema(sql: postgres.Sql, schemaName: string, migrationsFolder: string): Promise<void> {
  const needed = readMigrationFiles({ migrationsFolder });
  if (needed.length === 0) return;
  const newest = Math.max(...needed.map((m) => m.folderMillis));
  const [{ applied } = { applied: null }] = await sql<{ applied: string | null }[]>`
    select (select max(created_at) from ${sql(`${schemaName}_migrations`)}.applied)::text as applied
    where to_regclass(${`${schemaName}_migrations.applied`}) is not null`.catch(() => [{ applied: null }]);
  if (applied === null || Number(applied) < newest) {
    const missing = needed.filter((m) => applied === null || m.folderMillis > Number(applied)).length;
    throw new SchemaBehindError(`the ${schemaName} schema lacks ${missing} migration(s) this release needs; run the release's migration Job first (or start with MIGRATIONS=apply)`);
  }
}
