// Every setting a process reads is documented, and every documented setting is read: the
// environment variables named in the code of the processes (services, gateway, `npm start`, the
// operator CLI) against docs/configuration.md's table and the pages it sends readers to. A
// setting added without a line in the docs, or a line left after its setting went, fails here.
import { describe, expect, test } from "bun:test";
import { Glob } from "bun";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "../..");
const SOURCES = ["services/*/src/**/*.ts", "gateway/src/**/*.ts", "deploy/local/**/*.ts", "deploy/admin/**/*.ts"];
// docs/configuration.md, and the pages its table refers to for their own settings.
const PAGES = ["docs/configuration.md", "services/generation-runner/README.md", "docs/operations.md", "docs/development.md", "docs/performance.md"];
// Read by the code but not settings of ours: Bun's own variable, set by the runner for itself.
const NOT_OURS = new Set(["BUN_CONFIG_MAX_HTTP_REQUESTS"]);

const sourceFiles = () => SOURCES.flatMap((pattern) => [...new Glob(pattern).scanSync(ROOT)]);

/** Variables the code reads: through the kit's env* readers (or any *Env/*env* helper), process.env or an env object. */
function readByCode(): Map<string, string> {
  const read = new Map<string, string>();
  for (const file of sourceFiles()) {
    const text = readFileSync(join(ROOT, file), "utf8");
    const patterns = [/\b\w*[Ee]nv\w*\(\s*(?:[\w.]+,\s*)?"([A-Z][A-Z0-9_]+)"/g, /process\.env\.([A-Z][A-Z0-9_]+)/g, /process\.env\["([A-Z][A-Z0-9_]+)"\]/g, /\benv\.([A-Z][A-Z0-9_]{2,})\b/g];
    for (const pattern of patterns) for (const m of text.matchAll(pattern)) if (!NOT_OURS.has(m[1]!)) read.set(m[1]!, file);
  }
  return read;
}

/** The names in docs/configuration.md's table (a row may name several, comma-separated). */
function tableNames(): string[] {
  const doc = readFileSync(join(ROOT, "docs/configuration.md"), "utf8");
  return [...doc.matchAll(/^\| ([A-Z][A-Z0-9_]*(?:, [A-Z][A-Z0-9_]*)*) \|/gm)].flatMap((m) => m[1]!.split(", "));
}

describe("settings and their documentation", () => {
  test("every variable a process reads is documented", () => {
    const documented = new Set(tableNames());
    for (const page of PAGES) for (const m of readFileSync(join(ROOT, page), "utf8").matchAll(/\b([A-Z][A-Z0-9]*_[A-Z0-9_]+)\b/g)) documented.add(m[1]!);
    const undocumented = [...readByCode()].filter(([name]) => !documented.has(name)).map(([name, file]) => `${name} (${file})`);
    expect(undocumented).toEqual([]);
  });

  test("every variable in the settings table is read by some process", () => {
    const mentioned = sourceFiles().map((file) => readFileSync(join(ROOT, file), "utf8")).join("\n");
    const stale = tableNames().filter((name) => !new RegExp(`\\b${name}\\b`).test(mentioned));
    expect(stale).toEqual([]);
  });

  test("the reader finds the kit's forms and the table's rows (it would miss nothing it is meant to see)", () => {
    const read = readByCode();
    for (const name of ["DATABASE_URL", "WEBHOOK_ATTEMPTS", "PUBLISH_BACKOFF_MS", "SHUTDOWN_DELAY_MS", "SIMULATOR_REQUESTS_PER_MINUTE", "EVENTS_HEARTBEAT_MS"]) expect({ name, read: read.has(name) }).toEqual({ name, read: true });
    expect(tableNames()).toEqual(expect.arrayContaining(["PORT", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY", "TLS_CERT_FILE", "TLS_KEY_FILE"]));
  });
});
