// The operator CLI's model commands against the running stack: JSON on stdout, errors on
// stderr with a non-zero exit.
import { beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { runAdmin } from "../harness/admin-cli.ts";
import { useStack, type TestStack } from "../harness/stack.ts";

let stack: TestStack;

beforeAll(async () => {
  stack = await useStack();
});

const admin = (...args: string[]) => runAdmin(stack, ...args);

test("model add, update and list", async () => {
  const id = `simulator:cli-${randomBytes(4).toString("hex")}`;
  const added = await admin("model", "add", "--id", id, "--input-price", "0.3", "--output-price", "1.2", "--batch", "--fallback", "simulator:sim-fast");
  expect(added.code).toBe(0);
  expect(JSON.parse(added.stdout)).toEqual({
    id,
    active: true,
    supports_batch: true,
    input_price_per_million: "0.30",
    output_price_per_million: "1.20",
    fallback_model: "simulator:sim-fast",
  });

  const updated = await admin("model", "update", "--id", id, "--active", "false", "--fallback", "");
  expect(updated.code).toBe(0);
  expect(JSON.parse(updated.stdout)).toMatchObject({ id, active: false });
  expect(JSON.parse(updated.stdout).fallback_model).toBeUndefined();

  const listed = await admin("model", "list");
  expect(listed.code).toBe(0);
  const models = JSON.parse(listed.stdout) as { id: string }[];
  expect(models.map((m) => m.id)).toContain(id);
  expect(models.map((m) => m.id)).toContain("simulator:sim-fast");
}, 30_000);

test("mistakes are reported on stderr with a non-zero exit", async () => {
  const missing = await admin("model", "add", "--id", "simulator:x");
  expect(missing.code).toBe(2);
  expect(missing.stderr).toContain("--input-price is required");

  const taken = await admin("model", "add", "--id", "simulator:sim-fast", "--input-price", "1", "--output-price", "1");
  expect(taken.code).toBe(1);
  expect(JSON.parse(taken.stderr)).toMatchObject({ code: 6 });
}, 30_000);

describe("rate limits", () => {
  const limits = (m: Record<string, unknown>) => ({
    requests_per_minute: m.requests_per_minute,
    tokens_per_minute: m.tokens_per_minute,
    max_concurrent_calls: m.max_concurrent_calls,
  });
  const listed = async (id: string) => {
    const list = await admin("model", "list");
    expect(list.code).toBe(0);
    return (list.json as Record<string, unknown>[]).find((m) => m.id === id);
  };

  // Priced above simulator:sim-fast, so the catalog's default (the cheapest active model) stays it.
  test("set on add and on update, removed with none, read back through model list", async () => {
    const id = `simulator:cli-${randomBytes(4).toString("hex")}`;
    const added = await admin("model", "add", "--id", id, "--input-price", "0.3", "--output-price", "1.2", "--requests-per-minute", "500", "--tokens-per-minute", "10000000000", "--max-concurrent-calls", "50");
    expect(added.code).toBe(0);
    // The largest tokens per minute (past int32, sent as int64) comes back as a JSON number.
    expect(limits(added.json)).toEqual({ requests_per_minute: 500, tokens_per_minute: 10_000_000_000, max_concurrent_calls: 50 });
    expect(limits((await listed(id))!)).toEqual({ requests_per_minute: 500, tokens_per_minute: 10_000_000_000, max_concurrent_calls: 50 });

    // One limit changed, one removed; the third and everything else stay as they were.
    const updated = await admin("model", "update", "--id", id, "--requests-per-minute", "10000000", "--tokens-per-minute", "none");
    expect(updated.code).toBe(0);
    expect(updated.json).toMatchObject({ id, active: true, input_price_per_million: "0.30", requests_per_minute: 10_000_000, max_concurrent_calls: 50 });
    expect("tokens_per_minute" in updated.json).toBe(false);

    const untouched = await admin("model", "update", "--id", id, "--active", "false");
    expect(untouched.code).toBe(0);
    expect(limits(untouched.json)).toEqual({ requests_per_minute: 10_000_000, tokens_per_minute: undefined, max_concurrent_calls: 50 });

    const removed = await admin("model", "update", "--id", id, "--requests-per-minute", "none", "--max-concurrent-calls", "none", "--tokens-per-minute", "1");
    expect(removed.code).toBe(0);
    const read = (await listed(id))!;
    expect(read).toMatchObject({ id, active: false, tokens_per_minute: 1 });
    // Unset limits are left out of the JSON, as an unset fallback_model is.
    expect(Object.keys(read)).not.toContain("requests_per_minute");
    expect(Object.keys(read)).not.toContain("max_concurrent_calls");
  }, 30_000);

  test("a model added without limits has none configured", async () => {
    const id = `simulator:cli-${randomBytes(4).toString("hex")}`;
    const added = await admin("model", "add", "--id", id, "--input-price", "0.3", "--output-price", "1.2", "--inactive");
    expect(added.code).toBe(0);
    expect(limits(added.json)).toEqual({ requests_per_minute: undefined, tokens_per_minute: undefined, max_concurrent_calls: undefined });
    const seeded = await listed("openai:gpt-4o-mini");
    expect(limits(seeded!)).toEqual({ requests_per_minute: undefined, tokens_per_minute: undefined, max_concurrent_calls: undefined });
  }, 30_000);

  test("bad values are refused with a clear error and a non-zero exit, changing nothing", async () => {
    const id = `simulator:cli-${randomBytes(4).toString("hex")}`;
    const added = await admin("model", "add", "--id", id, "--input-price", "0.3", "--output-price", "1.2", "--inactive", "--requests-per-minute", "60");
    expect(added.code).toBe(0);

    const bounds = { "requests-per-minute": "10,000,000", "tokens-per-minute": "10,000,000,000", "max-concurrent-calls": "100,000" };
    const tooLarge = { "requests-per-minute": "10000001", "tokens-per-minute": "10000000001", "max-concurrent-calls": "100001" };
    const cases = Object.entries(bounds).flatMap(([flag, max]) =>
      ["0", "-1", "abc", "1.5", tooLarge[flag as keyof typeof tooLarge]].flatMap((value) => [
        { flag, max, value, args: ["model", "add", "--id", `simulator:cli-bad-${randomBytes(4).toString("hex")}`, "--input-price", "1", "--output-price", "1", `--${flag}`, value] },
        { flag, max, value, args: ["model", "update", "--id", id, `--${flag}`, value] },
      ]),
    );
    // `none` removes a limit on update only: a new model simply leaves the flag out.
    cases.push({ flag: "requests-per-minute", max: bounds["requests-per-minute"], value: "none", args: ["model", "add", "--id", "simulator:cli-none", "--input-price", "1", "--output-price", "1", "--requests-per-minute", "none"] });

    const results = await Promise.all(cases.map((c) => admin(...c.args)));
    results.forEach((result, i) => {
      const { flag, max, value, args } = cases[i];
      expect({ args, code: result.code, stdout: result.stdout }).toEqual({ args, code: 2, stdout: "" });
      expect(result.stderr).toContain(`--${flag} must be a whole number from 1 to ${max}`);
      expect(result.stderr).toContain(`got "${value}"`);
    });

    const list = (await admin("model", "list")).json as Record<string, unknown>[];
    expect(list.filter((m) => String(m.id).startsWith("simulator:cli-bad-") || m.id === "simulator:cli-none")).toEqual([]);
    expect(list.find((m) => m.id === id)).toMatchObject({ requests_per_minute: 60 });
  }, 60_000);
});
