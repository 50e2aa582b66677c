// Replicas of a service starting at once on a fresh database (Kubernetes rolls several out
// together): openServiceDatabase serializes the migrations with an advisory lock, so every
// replica starts and each migration is applied once. Runs on a real Postgres, in throwaway databases.
import { afterAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { openServiceDatabase } from "../../services/kit/src/db.ts";
import { schema as catalogSchema } from "../../services/workflow-catalog/src/db/client.ts";

const ADMIN_URL = process.env.TEST_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const databases: string[] = [];
const folders: string[] = [];

function freshDatabaseUrl(): string {
  const name = `migrate_race_${process.pid}_${randomBytes(3).toString("hex")}`;
  databases.push(name);
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

afterAll(async () => {
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} });
  for (const name of databases) await admin.unsafe(`drop database if exists "${name}" with (force)`);
  await admin.end();
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

describe("openServiceDatabase with several replicas starting together", () => {
  test("a migration that cannot run twice runs once, and every replica opens", async () => {
    // Unlocked, each replica would see no migration applied, wait in pg_sleep, then the second
    // `create table` would fail (42P07) and so would that replica's start.
    const folder = mkdtempSync(join(tmpdir(), "migrate-race-"));
    folders.push(folder);
    mkdirSync(join(folder, "meta"));
    writeFileSync(join(folder, "meta/_journal.json"), JSON.stringify({ version: "7", dialect: "postgresql", entries: [{ idx: 0, version: "7", when: 1_700_000_000_000, tag: "0000_race", breakpoints: true }] }));
    writeFileSync(join(folder, "0000_race.sql"), 'create schema "race";\n--> statement-breakpoint\nselect pg_sleep(0.3);\n--> statement-breakpoint\ncreate table "race"."things" (id int primary key);\n');
    const url = freshDatabaseUrl();
    const opened = await Promise.all(Array.from({ length: 4 }, () => openServiceDatabase({ databaseUrl: url, schemaName: "race", schema: {}, migrationsFolder: folder, poolSize: 2 })));
    try {
      const [{ applied }] = await opened[0].sql`select count(*)::int as applied from race_migrations.applied`;
      expect(applied).toBe(1);
      expect((await opened[3].sql`select * from race.things`).length).toBe(0);
    } finally {
      await Promise.all(opened.map((d) => d.close()));
    }
  });

  test("a service's real migrations, three replicas at once", async () => {
    const url = freshDatabaseUrl();
    const migrationsFolder = fileURLToPath(new URL("../../services/workflow-catalog/src/db/migrations", import.meta.url));
    const opened = await Promise.all(Array.from({ length: 3 }, () => openServiceDatabase({ databaseUrl: url, schemaName: "workflow_catalog", schema: catalogSchema, migrationsFolder, poolSize: 2 })));
    try {
      const [{ applied }] = await opened[0].sql`select count(*)::int as applied from workflow_catalog_migrations.applied`;
      // Each migration of the journal once.
      const journal = JSON.parse(readFileSync(join(migrationsFolder, "meta", "_journal.json"), "utf8")) as { entries: unknown[] };
      expect(applied).toBe(journal.entries.length);
    } finally {
      await Promise.all(opened.map((d) => d.close()));
    }
  });
});
