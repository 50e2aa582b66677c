// Every process runs from one bundled file rather than from its hundreds of TypeScript modules:
// a Bun process holds each loaded module's source and bytecode, and one bundle saves about
// 9 MiB of RSS per process (docs/performance-history.md, item 8). The bundle is written beside its entry
// (`main.ts` → `main.bundle.js`) so paths the entry resolves from import.meta.url, such as its
// migrations folder, stay the same. `npm start`, the tests and the container image all run bundles.
import { mkdtemp, rename, rm } from "node:fs/promises";
import { basename, dirname, join, relative, resolve } from "node:path";

export const bundlePathOf = (entry: string) => entry.replace(/\.ts$/, ".bundle.js");

/** Builds one process's bundle; returns its path. Safe while another stack builds the same one. */
export async function bundleProcess(entry: string): Promise<string> {
  const target = bundlePathOf(entry);
  // Built into a private folder and renamed into place: a process starting from the same bundle
  // at that moment reads either the old file or the new one, never half of one.
  const scratch = await mkdtemp(join(dirname(entry), ".bundle-"));
  try {
    const name = basename(target);
    const withMap = process.env.BUNDLE_SOURCEMAP !== "none";
    // Whitespace and syntax only: names stay, so stack traces and Elysia's reading of its
    // handlers' source are unchanged; less source for every process to hold.
    const result = await Bun.build({ entrypoints: [entry], target: "bun", outdir: scratch, naming: name, sourcemap: withMap ? "linked" : "none", minify: { whitespace: true, syntax: true } });
    if (!result.success) throw new Error(`cannot bundle ${entry}: ${result.logs.map((log) => log.message).join("; ")}`);
    // Bun reads the map it finds beside a bundle, whatever the bundle says: a stale one would misplace every frame.
    if (withMap) await rename(await lineMap(join(scratch, `${name}.map`), scratch, dirname(target)), `${target}.map`);
    else await rm(`${target}.map`, { force: true });
    await rename(join(scratch, name), target);
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
  return target;
}

/**
 * Bun decodes a bundle's whole map the first time anything formats a stack (postgres.js does on
 * its first query) and keeps it for good, about 32 bytes a segment: 16.5 MiB in the gateway.
 * Rewritten with one segment per original line (frames keep their file and line; the column is
 * that of the line's first mapped token) and without the sources' text (Bun reads a code frame
 * from the source file itself). Sources are made relative to the bundle's folder: Bun wrote them
 * relative to the scratch folder, one level deeper.
 */
async function lineMap(path: string, builtIn: string, servedFrom: string): Promise<string> {
  const map = await Bun.file(path).json();
  map.sources = map.sources.map((source: string) => relative(servedFrom, resolve(builtIn, source)));
  map.sourcesContent = map.sources.map(() => null);
  map.mappings = linesOnly(map.mappings);
  map.names = [];
  await Bun.write(path, JSON.stringify(map));
  return path;
}

const DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/** A segment's fields (base64 VLQ). */
function decodeSegment(segment: string): number[] {
  const values: number[] = [];
  let value = 0;
  let shift = 0;
  for (const char of segment) {
    const digit = DIGITS.indexOf(char);
    value += (digit & 31) * 2 ** shift;
    if (digit & 32) shift += 5;
    else {
      values.push(value % 2 ? -(value - 1) / 2 : value / 2);
      value = shift = 0;
    }
  }
  return values;
}

function encodeSegment(values: number[]): string {
  let text = "";
  for (const v of values) {
    let n = v < 0 ? -v * 2 + 1 : v * 2;
    do {
      const digit = n % 32;
      n = Math.floor(n / 32);
      text += DIGITS[n ? digit | 32 : digit];
    } while (n);
  }
  return text;
}

/** Keeps each generated line's first segment and those where the original file or line changes. */
function linesOnly(mappings: string): string {
  const at = [0, 0, 0, 0]; // generated column, source, original line and column
  const written = [0, 0, 0, 0]; // the last segment kept: fields are deltas from it
  const keep = (fields: number[], kept: string[]) => {
    kept.push(encodeSegment(fields.map((v, i) => v - written[i])));
    written.splice(0, 4, ...fields);
  };
  return mappings
    .split(";")
    .map((line) => {
      at[0] = written[0] = 0;
      const kept: string[] = [];
      for (const segment of line.split(",")) {
        if (!segment) continue;
        const fields = decodeSegment(segment);
        for (let i = 0; i < Math.min(4, fields.length); i++) at[i] += fields[i];
        if (fields.length >= 4 && (!kept.length || at[1] !== written[1] || at[2] !== written[2])) keep([...at], kept);
      }
      return kept.join(",");
    })
    .join(";");
}

// `bun deploy/local/process-bundles.ts <entry>…` builds bundles ahead of time (the container image).
if (import.meta.main) {
  for (const entry of process.argv.slice(2)) console.log(await bundleProcess(entry));
}
