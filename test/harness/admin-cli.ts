// The operator CLI as an operator runs it against the test stack: a separate process, JSON on
// stdout, errors on stderr.
import { fileURLToPath } from "node:url";
import type { TestStack } from "./stack.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

export interface AdminResult {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed, when it is JSON. */
  json: any;
}

/** `stack` may be any environment to run it in: usage errors need no services. The CLI acts with the stack's operator token. */
export async function runAdmin(stack: Pick<TestStack, "env"> & Partial<Pick<TestStack, "operatorTokenFile">>, ...args: string[]): Promise<AdminResult> {
  const operator = stack.operatorTokenFile ? { OPERATOR_TOKEN_FILE: stack.operatorTokenFile } : {};
  const child = Bun.spawn([process.execPath, "deploy/admin/cli.ts", ...args], { cwd: root, env: { ...stack.env, ...operator, LOG_LEVEL: "silent" }, stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  let json: any;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  return { code, stdout, stderr, json };
}
