// Every process runs from one bundled file rather than from its hundreds of TypeScript modules:
// a Bun process holds each loaded module's source and bytecode, and one bundle saves about
// 9 MiB of RSS per process (README, Performance). The bundle is written beside its entry
// (`main.ts` → `main.bundle.js`) so paths the entry resolves from import.meta.url, such as its
// migrations folder, stay the same. `npm start`, the tests and the container image all run bundles.
import { mkdtemp, rename, rm } from "node:fs/promises";
import { basename, dirname, join } from "node:path";

export const bundlePathOf = (entry: string) => entry.replace(/\.ts$/, ".bundle.js");

/** Builds one process's bundle; returns its path. Safe while another stack builds the same one. */
export async function bundleProcess(entry: string): Promise<string> {
  const target = bundlePathOf(entry);
  // Built into a private folder and renamed into place: a process starting from the same bundle
  // at that moment reads either the old file or the new one, never half of one.
  const scratch = await mkdtemp(join(dirname(entry), ".bundle-"));
  try {
    const name = basename(target);
    const result = await Bun.build({ entrypoints: [entry], target: "bun", outdir: scratch, naming: name, sourcemap: process.env.BUNDLE_SOURCEMAP === "none" ? "none" : "linked" });
    if (!result.success) throw new Error(`cannot bundle ${entry}: ${result.logs.map((log) => log.message).join("; ")}`);
    await rename(join(scratch, `${name}.map`), `${target}.map`).catch(() => {});
    await rename(join(scratch, name), target);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return target;
}

// `bun deploy/local/process-bundles.ts <entry>…` builds bundles ahead of time (the container image).
if (import.meta.main) {
  for (const entry of process.argv.slice(2)) console.log(await bundleProcess(entry));
}
