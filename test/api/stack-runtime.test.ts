// Every process of the stack `npm start` runs gets the engine settings of RUNTIME_START_ENV and its
// own of PROCESS_START_ENV (deploy/local/stack.ts): read from each running process's own environment.
import { beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { PROCESS_START_ENV, RUNTIME_START_ENV, type ProcessName } from "../../deploy/local/stack.ts";
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

test("each process runs with its own start settings (the runner's engine sized by 512 MiB of RAM among them)", () => {
  for (const [name, settings] of Object.entries(PROCESS_START_ENV) as [ProcessName, Record<string, string>][]) {
    const env = environmentOf(stack.processes.get(name)!.pid);
    for (const [key, value] of Object.entries(settings)) expect({ name, [key]: env[key] }).toEqual({ name, [key]: value });
  }
  expect(environmentOf(stack.processes.get("generationRunner")!.pid).BUN_JSC_forceRAMSize).toBe(String(512 * 2 ** 20));
});
