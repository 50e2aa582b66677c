// The operator CLI's model commands against the running stack: JSON on stdout, errors on
// stderr with a non-zero exit.
import { beforeAll, expect, test } from "bun:test";
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
