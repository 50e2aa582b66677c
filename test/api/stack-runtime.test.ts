// Every process of the stack `npm start` runs gets the engine settings of RUNTIME_START_ENV
// (deploy/local/stack.ts): read from each running process's own environment.
import { beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { RUNTIME_START_ENV } from "../../deploy/local/stack.ts";
import { useStack, type TestStack } from "../harness/stack.ts";

let stack: TestStack;

beforeAll(async () => {
  stack = await useStack();
});

/** The environment a running process was started with. */
function environmentOf(pid: number): Record<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean);
  return Object.fromEntries(entries.map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]));
}

test("every process runs with the engine settings the stack gives it", () => {
  expect(stack.processes.size).toBe(7);
  for (const [name, child] of stack.processes) {
    const env = environmentOf(child.pid);
    for (const [key, value] of Object.entries(RUNTIME_START_ENV)) expect({ name, [key]: env[key] }).toEqual({ name, [key]: value });
  }
});
