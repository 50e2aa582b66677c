// `npm start` validates its settings: a bad or unreachable one is one clear line naming the
// variable and a non-zero exit, before anything starts.
import { describe, expect, test } from "bun:test";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));

async function start(env: Record<string, string>) {
  const child = Bun.spawn([process.execPath, "deploy/local/start.ts"], {
    cwd: root,
    env: { ...process.env, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
  clearTimeout(timer);
  return { code, lines: stderr.trim().split("\n").filter(Boolean) };
}

describe("npm start refuses bad settings", () => {
  const cases: [string, Record<string, string>, RegExp][] = [
    ["a non-numeric PORT", { PORT: "eighty" }, /PORT/],
    ["a PORT out of range", { PORT: "70000" }, /PORT/],
    ["a DATABASE_URL that is not postgres", { DATABASE_URL: "mysql://localhost/articles" }, /DATABASE_URL/],
    ["an unreachable DATABASE_URL", { DATABASE_URL: "postgres://postgres@127.0.0.1:1/articles" }, /DATABASE_URL/],
    ["an unreachable REDIS_URL", { REDIS_URL: "redis://127.0.0.1:1" }, /REDIS_URL/],
    ["a REDIS_PREFIX with spaces", { REDIS_PREFIX: "my prefix" }, /REDIS_PREFIX/],
  ];
  for (const [name, env, variable] of cases) {
    test(name, async () => {
      const { code, lines } = await start(env);
      expect(code).not.toBe(0);
      expect(lines.length).toBe(1);
      expect(lines[0]).toMatch(variable);
    });
  }
});
