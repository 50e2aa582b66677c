// The one allowed direction of imports (docs/architecture.md, "Imports"): each process (the gateway,
// each service) imports its own folder, the kit and proto/gen, never another process's source; the
// kit and proto/gen import no process; the client package imports nothing of the repository; deploy/
// imports no test code; the runner reaches its scheduler through scheduler/index.ts. And no module
// reaches itself again through runtime imports, so load order never hands a module another's
// half-initialised exports.
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const root = resolve(import.meta.dir, "../..");
const TOP_FOLDERS = ["gateway", "services", "proto", "deploy", "test", "clients"];
const SKIPPED = new Set(["node_modules", "dist", ".git"]);

function tsFiles(folder: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(join(root, folder), { withFileTypes: true })) {
    const path = `${folder}/${entry.name}`;
    if (entry.isDirectory()) {
      if (!SKIPPED.has(entry.name)) files.push(...tsFiles(path));
    } else if (/\.(ts|tsx|mts)$/.test(entry.name) && !entry.name.endsWith(".d.ts")) files.push(path);
  }
  return files;
}

/** Every specifier a file names: static and type imports, re-exports, dynamic imports. */
const ANY_IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|^\s*import\s+)["']([^"']+)["']/gm;
const transpiler = new Bun.Transpiler({ loader: "ts" });

function resolved(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  return relative(root, resolve(root, dirname(from), specifier));
}

/** What owns a file: a process ("gateway", "services/<x>"), the kit, proto, deploy, test or the client. */
function ownerOf(file: string): string {
  const [top, second] = file.split("/");
  if (top === "services") return second === "kit" ? "kit" : `services/${second}`;
  if (top === "clients") return `clients/${second}`;
  return top!;
}

const isProcess = (owner: string) => owner === "gateway" || owner.startsWith("services/");

const SCHEDULER = "services/generation-runner/src/scheduler/";

/** Why `from` may not import `to`, or undefined when the import goes the allowed way. */
function refusal(from: string, to: string): string | undefined {
  if (to.startsWith(SCHEDULER) && from.startsWith("services/") && !from.startsWith(SCHEDULER) && to !== `${SCHEDULER}index.ts`) {
    return "the runner reaches its scheduler through scheduler/index.ts only";
  }
  const source = ownerOf(from);
  const target = ownerOf(to);
  if (source === target) return undefined;
  if (source.startsWith("clients/")) return "the client package imports nothing of the repository (it is installed on its own)";
  if (source === "test") return undefined;
  if (source === "deploy") return target === "test" || target.startsWith("clients/") ? "deploy/ runs the processes, not the tests" : undefined;
  if (target === "proto") return undefined;
  if (isProcess(source) && target === "kit") return undefined;
  if (source === "kit" || source === "proto") return `${source === "kit" ? "the kit" : "proto/gen"} imports no process`;
  return `a process imports only its own folder, services/kit and proto/gen, not ${target}`;
}

const files = TOP_FOLDERS.flatMap(tsFiles);
const known = new Set(files);
const sources = new Map(files.map((file) => [file, readFileSync(join(root, file), "utf8")]));

function boundaryViolations(): string[] {
  const found: string[] = [];
  for (const [file, text] of sources) {
    for (const [, specifier] of text.matchAll(ANY_IMPORT)) {
      const target = resolved(file, specifier!);
      const why = target && refusal(file, target);
      if (why) found.push(`${file} imports ${target}: ${why}`);
    }
  }
  return found;
}

/** Runtime edges only: type-only imports are erased, so they cannot form a load-order cycle. */
function runtimeImports(file: string, text: string): string[] {
  let imports: { path: string }[];
  try {
    imports = transpiler.scanImports(text);
  } catch {
    return [];
  }
  return imports.map((i) => resolved(file, i.path)).filter((target): target is string => target !== undefined && known.has(target));
}

/** Strongly connected groups of more than one module (Tarjan), each listed in a stable order. */
function cyclesOf(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  let next = 0;
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node)!, index.get(to)!));
    }
    if (low.get(node) === index.get(node)) {
      const group: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        group.push(member);
      } while (member !== node);
      if (group.length > 1 || (graph.get(node) ?? []).includes(node)) groups.push(group.sort());
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return groups;
}

describe("import boundaries", () => {
  test("no process imports another service's source, and the kit, proto/gen and the client import no process", () => {
    expect(boundaryViolations()).toEqual([]);
  });

  test("no runtime import cycle", () => {
    const graph = new Map([...sources].map(([file, text]) => [file, runtimeImports(file, text)]));
    expect(cyclesOf(graph).map((group) => group.join(" <-> "))).toEqual([]);
  });

  test("the check refuses what it is meant to refuse", () => {
    expect(refusal("gateway/src/a.ts", "services/generation-runner/src/b.ts")).toBeDefined();
    expect(refusal("services/article-store/src/a.ts", "services/workflow-catalog/src/b.ts")).toBeDefined();
    expect(refusal("services/article-store/src/a.ts", "gateway/src/b.ts")).toBeDefined();
    expect(refusal("services/kit/src/a.ts", "services/article-store/src/b.ts")).toBeDefined();
    expect(refusal("clients/typescript/src/a.ts", "gateway/src/b.ts")).toBeDefined();
    expect(refusal("gateway/src/a.ts", "services/kit/src/rules/usd.ts")).toBeUndefined();
    expect(refusal("services/generation-runner/src/a.ts", "proto/gen/x_pb.ts")).toBeUndefined();
    expect(refusal("test/api/a.test.ts", "services/article-store/src/b.ts")).toBeUndefined();
    expect(refusal("deploy/local/stack.ts", "gateway/src/config.ts")).toBeUndefined();
    expect(refusal("services/generation-runner/src/worker.ts", "services/generation-runner/src/scheduler/fair-gate.ts")).toBeDefined();
    expect(refusal("services/generation-runner/src/worker.ts", "services/generation-runner/src/scheduler/index.ts")).toBeUndefined();
    expect(refusal("test/unit/provider-budgets.test.ts", "services/generation-runner/src/scheduler/fair-gate.ts")).toBeUndefined();
    expect(cyclesOf(new Map([["a", ["b"]], ["b", ["c"]], ["c", ["a"]], ["d", ["a"]]]))).toEqual([["a", "b", "c"]]);
  });
});
