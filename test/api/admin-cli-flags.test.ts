// The operator CLI's flags: each command accepts exactly the flags it declares (the ones its
// usage line and --help show). An unknown or misspelt flag, a value left out and a flag given
// twice are usage errors (exit 2, the command's usage line on stderr), before any service is
// called. No stack is needed: the service addresses point at a port nobody listens on.
import { beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code } from "@connectrpc/connect";
import { runAdmin } from "../harness/admin-cli.ts";
import { freePort } from "../harness/ports.ts";
import { SERVICE_URL_VARIABLES } from "../../services/kit/src/config.ts";
import { COMMANDS } from "../../deploy/admin/commands/index.ts";
import { UsageError, editDistance, parseFlags, type FlagSpec } from "../../deploy/admin/args.ts";

let env: Record<string, string>;

beforeAll(async () => {
  const closed = `http://127.0.0.1:${await freePort()}`;
  // Any token: no service answers, so none is checked.
  const tokenFile = join(mkdtempSync(join(tmpdir(), "admin-flags-")), "operator.jwt");
  writeFileSync(tokenFile, "header.payload.signature\n");
  env = { ...(process.env as Record<string, string>), OPERATOR_TOKEN_FILE: tokenFile };
  for (const variable of Object.values(SERVICE_URL_VARIABLES)) env[variable] = closed;
});

const admin = (...args: string[]) => runAdmin({ env }, ...args);

const commandNamed = (name: string) => COMMANDS.find((c) => c.name === name)!;

/** What a usage error prints: the message, then the command's usage line. */
const usageError = (name: string, message: string) => `${name}: ${message}\nusage: npm run admin -- ${[name, commandNamed(name).usage].filter(Boolean).join(" ")}\n`;

function parseError(argv: string[], specs: readonly FlagSpec[]): string {
  try {
    parseFlags(argv, specs);
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError);
    return (error as Error).message;
  }
  throw new Error(`${argv.join(" ")} parsed`);
}

describe("unknown flags", () => {
  test("a misspelt flag is refused, naming it and the declared flag it is close to", async () => {
    const res = await admin("plan", "create", "--nmae", "Fair", "--monthly-words", "1", "--per-minute", "1", "--per-hour", "1", "--per-day", "1");
    expect({ code: res.code, stdout: res.stdout, stderr: res.stderr }).toEqual({
      code: 2,
      stdout: "",
      stderr: usageError("plan create", "unknown flag --nmae; did you mean --name?"),
    });
  }, 30_000);

  test("a flag close to nothing declared is refused without a suggestion", async () => {
    const res = await admin("key", "revoke", "--token", "abc");
    expect({ code: res.code, stdout: res.stdout, stderr: res.stderr }).toEqual({ code: 2, stdout: "", stderr: usageError("key revoke", "unknown flag --token") });
  }, 30_000);

  test("a command without flags says so", async () => {
    const res = await admin("model", "list", "--all");
    expect({ code: res.code, stderr: res.stderr }).toEqual({ code: 2, stderr: usageError("model list", "unknown flag --all; this command takes no flags") });
  }, 30_000);

  test("a flag another command takes is unknown here", async () => {
    // --plan belongs to account subscribe, not account usage.
    const res = await admin("account", "usage", "--account", "1", "--plan", "2");
    expect(res.code).toBe(2);
    expect(res.stderr).toBe(usageError("account usage", "unknown flag --plan"));
  }, 30_000);

  test.each([
    ["plan create", "nmae", "unknown flag --nmae; did you mean --name?"],
    ["plan create", "monthly", "unknown flag --monthly; did you mean --monthly-words?"],
    ["plan update", "per", "unknown flag --per; did you mean --per-day, --per-hour or --per-minute?"],
    ["plan update", "per-minutes", "unknown flag --per-minutes; did you mean --per-minute?"],
    ["model add", "requests-per-min", "unknown flag --requests-per-min; did you mean --requests-per-minute?"],
    ["model add", "active", "unknown flag --active; did you mean --inactive?"],
    ["model update", "inactive", "unknown flag --inactive; did you mean --active?"],
    ["key create", "expires", "unknown flag --expires; did you mean --expires-at?"],
    ["member add", "project", "unknown flag --project; did you mean --projects?"],
    ["brand-voice create", "desc", "unknown flag --desc; did you mean --description?"],
    ["brand-voice create", "style", "unknown flag --style"],
    ["article show", "", "unknown flag --"],
  ])("%s --%s", (name, flag, message) => {
    expect(parseError([`--${flag}`, "x"], commandNamed(name).flags)).toBe(message);
  });

  test("edit distance counts a swap of neighbours as one edit", () => {
    expect(editDistance("name", "name")).toBe(0);
    expect(editDistance("nmae", "name")).toBe(1);
    expect(editDistance("acount", "account")).toBe(1);
    expect(editDistance("user", "id")).toBe(4);
    expect(editDistance("", "id")).toBe(2);
  });
});

describe("values", () => {
  test("a flag that takes a value but is given none is refused: at the end, or before another flag", async () => {
    const atEnd = await admin("user", "create", "--email", "ops@example.com", "--name");
    expect({ code: atEnd.code, stdout: atEnd.stdout, stderr: atEnd.stderr }).toEqual({ code: 2, stdout: "", stderr: usageError("user create", "--name needs a value") });
    const beforeFlag = await admin("user", "create", "--name", "--email", "ops@example.com");
    expect({ code: beforeFlag.code, stdout: beforeFlag.stdout, stderr: beforeFlag.stderr }).toEqual({ code: 2, stdout: "", stderr: usageError("user create", "--name needs a value") });
  }, 30_000);

  test("--fallback on its own is no longer read as a model called \"true\"", () => {
    expect(parseError(["--id", "simulator:x", "--fallback"], commandNamed("model update").flags)).toBe("--fallback needs a value");
  });

  test("an empty value, and a value after = (even one starting with --), are values", () => {
    const update = commandNamed("model update").flags;
    expect(parseFlags(["--id", "simulator:x", "--fallback", ""], update)).toEqual({ id: "simulator:x", fallback: "" });
    expect(parseFlags(["--id=simulator:x", "--fallback="], update)).toEqual({ id: "simulator:x", fallback: "" });
    expect(parseFlags(["--project", "1", "--name", "Dry", "--description=--no-fluff"], commandNamed("brand-voice create").flags)).toEqual({
      project: "1",
      name: "Dry",
      description: "--no-fluff",
    });
  });

  test("a word where a flag belongs is still an unexpected argument", () => {
    expect(parseError(["--account", "1", "2"], commandNamed("account usage").flags)).toBe('unexpected argument "2"');
  });
});

describe("repeated flags", () => {
  test("the same flag given twice is refused", async () => {
    const res = await admin("account", "subscribe", "--account", "1", "--plan", "2", "--plan", "3");
    expect({ code: res.code, stdout: res.stdout, stderr: res.stderr }).toEqual({ code: 2, stdout: "", stderr: usageError("account subscribe", "--plan is given more than once") });
  }, 30_000);

  test("in either spelling, and for switches too", () => {
    expect(parseError(["--plan=2", "--plan", "3"], commandNamed("account subscribe").flags)).toBe("--plan is given more than once");
    const add = commandNamed("model add").flags;
    expect(parseError(["--id", "simulator:x", "--batch", "--batch", "false"], add)).toBe("--batch is given more than once");
  });
});

describe("switches and true|false flags keep their spelling", () => {
  const add = () => commandNamed("model add").flags;
  const update = () => commandNamed("model update").flags;

  test("model add: --batch and --inactive are switches; a following true|false is read as their value", () => {
    expect(parseFlags(["--batch", "--inactive", "--id", "simulator:x"], add())).toEqual({ batch: "true", inactive: "true", id: "simulator:x" });
    expect(parseFlags(["--id", "simulator:x", "--batch"], add())).toEqual({ id: "simulator:x", batch: "true" });
    expect(parseFlags(["--batch", "false", "--inactive", "true"], add())).toEqual({ batch: "false", inactive: "true" });
  });

  test("model update: --active and --batch take true or false", () => {
    expect(parseFlags(["--id", "simulator:x", "--active", "false", "--batch", "true"], update())).toEqual({ id: "simulator:x", active: "false", batch: "true" });
    expect(parseError(["--id", "simulator:x", "--active"], update())).toBe("--active needs a value");
  });

  test("a switch given something other than true or false is a usage error from the command", async () => {
    const res = await admin("model", "add", "--id", "simulator:x", "--input-price", "1", "--output-price", "1", "--batch", "yes");
    expect(res.code).toBe(2);
    expect(res.stderr).toBe(usageError("model add", '--batch must be true or false, got "yes"'));
  }, 30_000);
});

describe("every command's documented flags are accepted", () => {
  // A value each kind of placeholder accepts; a placeholder of alternatives (owner|admin, N|none) takes its first.
  const SAMPLES: Record<string, string> = {
    ID: "1",
    N: "1",
    W: "1",
    M: "1",
    H: "1",
    D: "1",
    P: "0.5",
    E: "ops@example.com",
    TEXT: "text",
    ISO8601: "2030-01-01T00:00:00Z",
    "provider:model": "simulator:sim-fast",
    "1,2": "1,2",
  };
  const sample = (value: string) => {
    const first = value.split("|")[0];
    return SAMPLES[first] ?? first;
  };
  /** Every flag the command declares, each with a value (switches on their own). */
  const allFlags = (specs: readonly FlagSpec[]) => specs.flatMap((s) => (s.value === undefined ? [`--${s.name}`] : [`--${s.name}`, sample(s.value)]));

  test("--help lists every declared flag on its command's line, in the spelling the command takes", async () => {
    const help = await admin("--help");
    expect(help.code).toBe(0);
    const width = Math.max(...COMMANDS.map((c) => c.name.length));
    for (const command of COMMANDS) {
      const line = help.stdout.split("\n").find((l) => l.startsWith(`  ${command.name.padEnd(width)}  `));
      expect({ command: command.name, line }).toEqual({ command: command.name, line: `  ${command.name.padEnd(width)}  ${command.usage}` });
      for (const spec of command.flags) {
        const text = spec.value === undefined ? `--${spec.name}` : `--${spec.name} ${spec.value}`;
        expect({ command: command.name, listed: line!.includes(spec.optional ? `[${text}]` : text) }).toEqual({ command: command.name, listed: true });
      }
    }
  }, 30_000);

  test.each(COMMANDS.map((c) => [c.name, c] as const))("%s: parses all its flags", (_name, command) => {
    const flags = parseFlags(allFlags(command.flags), command.flags);
    expect(Object.keys(flags).sort()).toEqual(command.flags.map((s) => s.name).sort());
  });

  test("with all of them given, each command gets past its checks to the service call", async () => {
    const results = await Promise.all(COMMANDS.map((c) => admin(...c.name.split(" "), ...allFlags(c.flags))));
    results.forEach((res, i) => {
      // Exit 1 with the service unreachable: no usage error (exit 2) on the way.
      let error: unknown;
      try {
        error = JSON.parse(res.stderr);
      } catch {
        error = res.stderr;
      }
      expect({ command: COMMANDS[i].name, code: res.code, error }).toEqual({ command: COMMANDS[i].name, code: 1, error: expect.objectContaining({ code: Code.Unavailable }) });
    });
  }, 60_000);
});
