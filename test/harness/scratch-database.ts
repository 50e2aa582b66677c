// A service's schema in a throwaway database of its own, migrated the way the service migrates at
// start, for tests of a service's domain code below its API. `drop` closes it and removes it.
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { openServiceDatabase, type ServiceDatabase } from "../../services/kit/src/db.ts";

const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export type ScratchDatabase<S extends Record<string, unknown>> = ServiceDatabase<S> & { drop(): Promise<void> };

export async function openScratchDatabase<S extends Record<string, unknown>>(
  label: string,
  opts: { schemaName: string; schema: S; migrationsFolder: URL; poolSize?: number },
): Promise<ScratchDatabase<S>> {
  const name = `${label}_${process.pid}_${randomBytes(3).toString("hex")}`;
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const database = await openServiceDatabase({ ...opts, databaseUrl: url.toString(), migrationsFolder: fileURLToPath(opts.migrationsFolder) });
  return {
    ...database,
    async drop() {
      await database.close();
      const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
      await admin.unsafe(`drop database if exists "${name}" with (force)`);
      await admin.end();
    },
  };
}
