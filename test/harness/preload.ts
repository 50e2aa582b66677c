// Loaded once before every test file (bunfig.toml). Whole-stack tests start the shared stack
// lazily through test/harness/stack.ts; this hook stops it after the last file.
import { afterAll } from "bun:test";

afterAll(async () => {
  const stop = (globalThis as { __stopStack?: () => Promise<void> }).__stopStack;
  if (stop) await stop();
});
