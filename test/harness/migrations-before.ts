// A service's migrations up to (not including) one of them, as a folder of their own: for tests
// that apply a migration over data written under the schema before it.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export function migrationsBefore(migrationsFolder: string, tag: string): { folder: string; remove(): void } {
  const folder = mkdtempSync(join(tmpdir(), "migrations-before-"));
  const journal = JSON.parse(readFileSync(join(migrationsFolder, "meta/_journal.json"), "utf8"));
  const at = journal.entries.findIndex((e: { tag: string }) => e.tag === tag);
  if (at < 0) throw new Error(`no migration ${tag} in ${migrationsFolder}`);
  const entries = journal.entries.slice(0, at);
  mkdirSync(join(folder, "meta"));
  writeFileSync(join(folder, "meta/_journal.json"), JSON.stringify({ ...journal, entries }));
  for (const e of entries) copyFileSync(join(migrationsFolder, `${e.tag}.sql`), join(folder, `${e.tag}.sql`));
  return { folder, remove: () => rmSync(folder, { recursive: true, force: true }) };
}
