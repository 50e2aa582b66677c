// The JSON line logger: LOG_LEVEL filters lines (a bad value stops a process at start with one
// line naming it), and credentials are masked at any depth, in arrays, and as bearer strings.
import { afterEach, describe, expect, test } from "bun:test";
import { fileURLToPath } from "node:url";
import { ConfigError } from "../../services/kit/src/config.ts";
import { createLogger, logLevel, logRedactPaths, maskSecrets, type Logger } from "../../services/kit/src/logger.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const saved = { LOG_LEVEL: process.env.LOG_LEVEL, LOG_REDACT_PATHS: process.env.LOG_REDACT_PATHS };

afterEach(() => {
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

/** The lines a logger made under LOG_LEVEL writes for one call of each method, by stream. */
function linesAt(level: string | undefined, use: (logger: Logger) => void = everyLevel) {
  if (level === undefined) delete process.env.LOG_LEVEL;
  else process.env.LOG_LEVEL = level;
  const logger = createLogger("test");
  const out: Record<string, unknown>[] = [];
  const err: Record<string, unknown>[] = [];
  const stdout = process.stdout.write;
  const stderr = process.stderr.write;
  process.stdout.write = ((chunk: string) => out.push(JSON.parse(chunk)) > 0) as typeof process.stdout.write;
  process.stderr.write = ((chunk: string) => err.push(JSON.parse(chunk)) > 0) as typeof process.stderr.write;
  try {
    use(logger);
  } finally {
    process.stdout.write = stdout;
    process.stderr.write = stderr;
  }
  return { out, err, levels: [...out, ...err].map((line) => line.level) };
}

function everyLevel(logger: Logger) {
  logger.debug("d");
  logger.info("i");
  logger.warn("w");
  logger.error("e");
}

describe("LOG_LEVEL", () => {
  const cases: [string | undefined, string[]][] = [
    ["debug", ["debug", "info", "warn", "error"]],
    ["info", ["info", "warn", "error"]],
    [undefined, ["info", "warn", "error"]],
    ["", ["info", "warn", "error"]],
    ["warn", ["warn", "error"]],
    ["error", ["error"]],
    ["silent", ["error"]],
    [" DEBUG ", ["debug", "info", "warn", "error"]],
    ["Silent", ["error"]],
  ];
  for (const [level, written] of cases) {
    test(`${JSON.stringify(level)} writes ${written.join(", ")}`, () => {
      expect(linesAt(level).levels).toEqual(written);
    });
  }

  test("errors go to stderr, the other levels to stdout, one JSON line each", () => {
    const { out, err } = linesAt("debug");
    expect(out.map((l) => l.level)).toEqual(["debug", "info", "warn"]);
    expect(err).toEqual([expect.objectContaining({ level: "error", service: "test", message: "e", time: expect.any(String) })]);
  });

  test("any other value is a ConfigError naming LOG_LEVEL and the allowed values", () => {
    for (const value of ["verbose", "trace", "1", "constructor"]) {
      expect(() => logLevel({ LOG_LEVEL: value })).toThrow(ConfigError);
      expect(() => logLevel({ LOG_LEVEL: value })).toThrow(`LOG_LEVEL: expected one of debug, info, warn, error, silent, got "${value}"`);
    }
    process.env.LOG_LEVEL = "verbose";
    expect(() => createLogger("test")).toThrow(ConfigError);
  });

  // The processes that make a logger at start: the gateway and every service (through runService).
  for (const entry of ["gateway/src/main.ts", "services/accounts-billing/src/main.ts"]) {
    test(`a bad value stops ${entry} at start with one line`, async () => {
      expect(await startWith(entry, { LOG_LEVEL: "verbose" })).toEqual({
        code: 2,
        stdout: "",
        stderr: [`configuration error: LOG_LEVEL: expected one of debug, info, warn, error, silent, got "verbose"`],
      });
    });
  }
});

/** How a process ends when started with these settings (a bad setting ends it at once). */
async function startWith(entry: string, settings: Record<string, string>) {
  const child = Bun.spawn([process.execPath, entry], {
    cwd: root,
    env: { ...process.env, ...settings, SERVICE_TOKEN: "SU5peYtm_X68s6Xoipgd6BsHerK3dsgk", OTEL_EXPORTER_OTLP_ENDPOINT: "" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
  const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  clearTimeout(timer);
  return { code, stdout, stderr: stderr.trim().split("\n") };
}

describe("LOG_REDACT_PATHS", () => {
  const line = { account: { id: "acc_1", email: "ann@example.com", address: { city: "Oslo" } }, recipients: [{ phone: "555" }], headers: { "x-forwarded-for": "10.0.0.1", accept: "*/*" } };

  test("unset, nothing but credentials is masked", () => {
    expect(logRedactPaths({})).toEqual([]);
    const { out } = linesAt("info", (logger) => logger.info("call", line));
    expect(out[0]).toMatchObject(line);
  });

  test("each listed path is written as [redacted], wildcards and quoted keys included, the rest as it was", () => {
    process.env.LOG_REDACT_PATHS = " account.email, account.address.city ,recipients[*].phone, headers[\"x-forwarded-for\"] ";
    const { out } = linesAt("info", (logger) => logger.info("call", line));
    expect(out).toEqual([
      expect.objectContaining({
        message: "call",
        service: "test",
        account: { id: "acc_1", email: "[redacted]", address: { city: "[redacted]" } },
        recipients: [{ phone: "[redacted]" }],
        headers: { "x-forwarded-for": "[redacted]", accept: "*/*" },
      }),
    ]);
    // The caller's object is not changed.
    expect(line.account.email).toBe("ann@example.com");
  });

  test("credential names are still masked alongside the paths", () => {
    process.env.LOG_REDACT_PATHS = "account.email";
    const { out } = linesAt("info", (logger) => logger.info("call", { account: { email: "e", api_key: "k" } }));
    expect(out[0]!.account).toEqual({ email: "[redacted]", api_key: "[redacted]" });
  });

  test("a malformed path, or one that would hide the line's own fields, is a ConfigError naming the setting", () => {
    for (const path of ["a..b", "headers[", "*", "message", "service"]) {
      process.env.LOG_REDACT_PATHS = `account.email,${path}`;
      expect(() => createLogger("test")).toThrow(ConfigError);
      expect(() => createLogger("test")).toThrow("LOG_REDACT_PATHS: ");
    }
  });

  test("a malformed path stops a process at start with one line", async () => {
    expect(await startWith("services/accounts-billing/src/main.ts", { LOG_REDACT_PATHS: "a..b" })).toEqual({
      code: 2,
      stdout: "",
      stderr: ["configuration error: LOG_REDACT_PATHS: Invalid redaction path (a..b)"],
    });
  });
});

describe("masking", () => {
  test("top-level credential fields and errors, as before", () => {
    expect(maskSecrets({ token: "t", apiKey: "k", password: "p", user: "u", error: new Error("boom") })).toEqual({
      token: "[redacted]",
      apiKey: "[redacted]",
      password: "[redacted]",
      user: "u",
      error: "boom",
    });
  });

  test("credential names, at any case and in longer names", () => {
    const names = ["authorization", "Authorization", "cookie", "set-cookie", "api_key", "API_KEY", "apiKey", "access_token", "refresh_token", "client_secret", "private_key", "privateKey", "secret", "password", "serviceToken"];
    const masked = maskSecrets(Object.fromEntries(names.map((name) => [name, "x"])));
    for (const name of names) expect(masked[name]).toBe("[redacted]");
  });

  test("nested objects and arrays of objects", () => {
    const fields = {
      request: { headers: { authorization: "Basic dXNlcjpwYXNz", accept: "application/json" }, body: { user: { password: "hunter2", name: "ann" } } },
      providers: [{ name: "openai", api_key: "sk-1" }, { name: "other", credentials: { client_secret: "cs", refresh_token: "rt" } }],
      matrix: [[{ token: "deep" }]],
      count: 3,
    };
    expect(maskSecrets(fields)).toEqual({
      request: { headers: { authorization: "[redacted]", accept: "application/json" }, body: { user: { password: "[redacted]", name: "ann" } } },
      providers: [{ name: "openai", api_key: "[redacted]" }, { name: "other", credentials: { client_secret: "[redacted]", refresh_token: "[redacted]" } }],
      matrix: [[{ token: "[redacted]" }]],
      count: 3,
    });
    // The caller's objects are not changed.
    expect(fields.request.headers.authorization).toBe("Basic dXNlcjpwYXNz");
    expect(fields.providers[0]!.api_key).toBe("sk-1");
  });

  test("bearer credentials under any name, at any depth", () => {
    expect(maskSecrets({ header: "Bearer abc.def", list: ["bearer xyz", "Bearer"], nested: { value: "Bearer  q" }, text: "no Bearer here" })).toEqual({
      header: "Bearer [redacted]",
      list: ["Bearer [redacted]", "Bearer"],
      nested: { value: "Bearer [redacted]" },
      text: "no Bearer here",
    });
  });

  test("nested errors become their message (masked too)", () => {
    expect(maskSecrets({ failures: [new Error("one"), { cause: new Error("Bearer abc") }] })).toEqual({ failures: ["one", { cause: "Bearer [redacted]" }] });
  });

  test("fields with nothing to mask are the very same object, nested ones too", () => {
    const nested = { a: [1, "two", { b: null }], when: new Date(0) };
    const fields = { id: "x", n: 1, ok: true, missing: undefined, nested };
    expect(maskSecrets(fields)).toBe(fields);
    const masked = maskSecrets({ nested, secret: "s" });
    expect(masked.nested).toBe(nested);
  });

  test("cycles end as a placeholder and the line is still written", () => {
    const a: Record<string, unknown> = { name: "a", token: "t" };
    a.self = a;
    const list: unknown[] = [a];
    list.push(list);
    a.list = list;
    const masked = maskSecrets({ a }) as { a: Record<string, unknown> };
    expect(masked.a.self).toBe("[circular]");
    expect(masked.a.token).toBe("[redacted]");
    expect((masked.a.list as unknown[])[0]).toBe("[circular]");
    expect((masked.a.list as unknown[])[1]).toBe("[circular]");
    const { out } = linesAt("info", (logger) => logger.info("cyclic", { a, top: { up: a } }));
    expect(out).toHaveLength(1);
    expect(JSON.stringify(out[0])).not.toContain('"t"');
  });

  test("objects past the depth limit are a placeholder, never in the clear", () => {
    let deep: Record<string, unknown> = { token: "hidden" };
    for (let i = 0; i < 10; i++) deep = { next: deep };
    const text = JSON.stringify(maskSecrets({ deep }));
    expect(text).not.toContain("hidden");
    expect(text).toContain("[too deep]");
    // A shared (not cyclic) object is written in every place it appears.
    const shared = { id: 1 };
    expect(maskSecrets({ x: shared, y: [shared] })).toEqual({ x: { id: 1 }, y: [{ id: 1 }] });
  });

  test("the written line carries the masked fields", () => {
    const { out } = linesAt("debug", (logger) => logger.debug("call", { headers: { Authorization: "Bearer abc" }, auth: "Bearer abc", big: 10n }));
    expect(out).toEqual([expect.objectContaining({ level: "debug", message: "call", headers: { Authorization: "[redacted]" }, auth: "Bearer [redacted]", big: "10" })]);
  });
});
