// `npm run bench:observability`: what metrics and traces cost the hot paths. Boots the stack in
// four variants, all running at once: nothing observed (METRICS_PORT=0, no OTLP endpoint),
// metrics (the default), metrics plus every trace exported to an OTLP/HTTP receiver in this
// process, and metrics plus one trace in a hundred (OTEL_TRACES_SAMPLER). Then, slice after
// slice, it loads each variant's hot paths in turn for a short while: polling one article,
// listing 20, and creating articles that then generate to completion. The cost is read as CPU per
// request, summed over every process of the loaded stack and the Postgres backends of its
// database (from /proc; Redis is shared and not counted). Because the variants take turns within
// seconds of each other, the machine's drift (other work, a neighbour's load) falls on all of
// them alike, and each variant is set against "nothing observed" in the same slice: a figure is
// the median of those paired ratios. Each service holds 3 Postgres connections here, so that the
// four stacks fit a server's default 100. BENCH_ROUNDS sets how many sets of four stacks are booted
// (default 2: a stack's own luck at boot shows too), BENCH_SLICES the slices per set (default 8),
// BENCH_SECONDS each load (default 2). Then the gateway's own metrics and tracing work alone,
// without the stack (trace-overhead.ts). Writes test/bench/observability-cost.json.
import { writeFileSync } from "node:fs";
import { openBenchStack, type BenchContext, type BenchStack } from "./context.ts";
import { cpuMs, load, printTable } from "./measure.ts";
import { benchWorkflow, createBenchArticle, waitForArticles } from "./workflows.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 2);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const SLICES = Number(process.env.BENCH_SLICES ?? 8);

// Receives the exported spans (OTLP/HTTP JSON) and answers at once, as a collector would.
let spansReceived = 0;
let lastExportAt = 0;
const collector = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(request) {
    lastExportAt = performance.now();
    const body = (await request.json().catch(() => ({}))) as { resourceSpans?: { scopeSpans?: { spans?: unknown[] }[] }[] };
    for (const r of body.resourceSpans ?? []) for (const s of r.scopeSpans ?? []) spansReceived += s.spans?.length ?? 0;
    return Response.json({});
  },
});

const variants: { name: string; env: Record<string, string | undefined> }[] = [
  { name: "nothing observed", env: { METRICS_PORT: "0", OTEL_EXPORTER_OTLP_ENDPOINT: undefined } },
  { name: "metrics", env: { OTEL_EXPORTER_OTLP_ENDPOINT: undefined } },
  { name: "metrics + traces", env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}`, OTEL_BSP_SCHEDULE_DELAY: "500", OTEL_TRACES_SAMPLER: "parentbased_always_on" } },
  // What a busy deployment runs: one trace in a hundred kept, decided where the trace starts.
  {
    name: "metrics + 1% of traces",
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}`, OTEL_BSP_SCHEDULE_DELAY: "500", OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.01" },
  },
];

/**
 * Runs `work` and returns the CPU ms that the stack's processes and the Postgres backends serving
 * its database spent meanwhile (not other databases' backends: the other variants' stacks share
 * the machine).
 */
async function stackCpu<T>(ctx: BenchContext, work: () => Promise<T>): Promise<{ result: T; cpu: number }> {
  const backends = async () => (await ctx.sql`select pid from pg_stat_activity where datname = current_database()`).map((r) => Number(r.pid));
  const pids = [...[...ctx.stack.processes.values()].map((p) => p.pid), ...(await backends())];
  const before = new Map(pids.map((pid) => [pid, cpuMs(pid)]));
  const result = await work();
  // Backends that connected meanwhile count from zero; those that left are lost (pools keep theirs).
  const after = new Set([...pids, ...(await backends())]);
  const cpu = [...after].reduce((sum, pid) => sum + cpuMs(pid) - (before.get(pid) ?? 0), 0);
  return { result, cpu: Math.max(0, cpu) };
}

// The traced stacks export every OTEL_BSP_SCHEDULE_DELAY (500 ms); once nothing has arrived for
// longer than that, no span of the last slice is left in any process's queue.
const EXPORT_QUIET_MS = 800;
/**
 * Waits, before a slice, until no stack is exporting. Without it the stack that traces every
 * request went on exporting its backlog into this process (the load generator) during the next
 * slice, slowing that variant's load, and a slower load reads as more CPU per request: the
 * variant after it (one trace in a hundred, most slices) paid for it. The backlog's own CPU is
 * not counted, so "every trace" reads a little low.
 */
async function exportsSettled(): Promise<void> {
  while (performance.now() - lastExportAt < EXPORT_QUIET_MS) await Bun.sleep(50);
}

const PATHS = ["GET /v1/articles/{id}", "GET /v1/articles?per_page=20", "POST /v1/articles → completed"] as const;

/** One variant's stack, seeded: 20 completed ~1,000-word articles and a one-step echo workflow. */
async function preparedStack(env: Record<string, string | undefined>) {
  // Four stacks at once must fit the server's connections (100 by default): 3 per service process.
  const bench: BenchStack = await openBenchStack({ seconds: SECONDS, env: { DATABASE_POOL_SIZE: "3", ...env }, sqlPoolSize: 2 });
  const seeded = async () => {
    const ctx = await bench.tenant();
    const polledType = await benchWorkflow(ctx, "polled", ["[[sim:words=1000]] Write about {title}."]);
    const echoType = await benchWorkflow(ctx, "echo", ["[[sim:words=100]] Write about {title}."]);
    const ids: number[] = [];
    for (let i = 0; i < 20; i++) ids.push((await createBenchArticle(ctx, polledType, `Polled article ${i}`, { target_word_count: 1000 })).id);
    await waitForArticles(ctx, ids, "completed");
    return { ctx, echoType, ids };
  };
  // A stack whose seeding fails is stopped here: the caller never gets it to close.
  const { ctx, echoType, ids } = await seeded().catch(async (error) => {
    await bench.close();
    throw error;
  });
  let n = 0;
  /** Loads one path for SECONDS; returns its requests (articles created) and the CPU they cost. */
  const slice = async (path: (typeof PATHS)[number]) => {
    if (path === "POST /v1/articles → completed") {
      // Creation, then the generation of what was created: CPU per article from POST to completed.
      const created: number[] = [];
      const { cpu } = await stackCpu(ctx, async () => {
        await load(path, async () => {
          const res = await createBenchArticle(ctx, echoType, `Created ${n++}`).catch(() => undefined);
          if (res) created.push(res.id);
          return res !== undefined;
        }, { concurrency: 16, durationMs: SECONDS * 1000 });
        await waitForArticles(ctx, created, "completed");
      });
      return { requests: created.length, cpu };
    }
    const once = path === "GET /v1/articles/{id}"
      ? async () => (await ctx.api.get(`/v1/articles/${ids[0]}`)).status === 200
      : async () => (await ctx.api.get("/v1/articles?per_page=20&status=completed")).status === 200;
    const { result, cpu } = await stackCpu(ctx, () => load(path, once, { concurrency: 32, durationMs: SECONDS * 1000 }));
    return { requests: result.requests, cpu };
  };
  return { slice, close: () => bench.close() };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

// CPU ms per request, by variant and path, one entry per slice (all rounds).
const perRequest = new Map(variants.map((v) => [v.name, new Map(PATHS.map((p) => [p, [] as number[]]))]));
// Each variant's CPU per request over "nothing observed"'s in the same slice.
const paired = new Map(variants.map((v) => [v.name, new Map(PATHS.map((p) => [p, [] as number[]]))]));
const requests = new Map(variants.map((v) => [v.name, new Map(PATHS.map((p) => [p, 0]))]));
for (let round = 1; round <= ROUNDS; round++) {
  console.log(`round ${round} of ${ROUNDS}: booting a stack per variant…`);
  const stacks: Awaited<ReturnType<typeof preparedStack>>[] = [];
  try {
    for (const variant of variants) stacks.push(await preparedStack(variant.env));
    // A first slice of every path warms each stack's code; it is not counted.
    for (const stack of stacks) for (const path of PATHS) await stack.slice(path);
    for (let slice = 1; slice <= SLICES; slice++) {
      for (const path of PATHS) {
        // Each slice starts one variant later, so no variant always runs first (or last).
        const order = variants.map((_, i) => (i + slice + round) % variants.length);
        const readings = new Map<string, number>();
        for (const i of order) {
          await exportsSettled();
          const { requests: n, cpu } = await stacks[i]!.slice(path);
          readings.set(variants[i]!.name, cpu / Math.max(1, n));
          requests.get(variants[i]!.name)!.set(path, requests.get(variants[i]!.name)!.get(path)! + n);
        }
        for (const [name, cpu] of readings) {
          perRequest.get(name)!.get(path)!.push(cpu);
          paired.get(name)!.get(path)!.push(cpu / readings.get(variants[0].name)!);
        }
      }
      console.log(`  slice ${slice} of ${SLICES} done`);
    }
  } finally {
    for (const stack of stacks) await stack.close();
  }
}

// The gateway's own metrics and tracing work apart from the stack: test/bench/trace-overhead.ts
// in a process per variant, rounds interleaved, CPU µs per request (its client's included).
const gatewayVariants = ["none", "off", "sampled", "every"] as const;
const gatewayNames = { none: "nothing observed", off: "metrics", sampled: "metrics + 1% of traces", every: "metrics + every trace" };
const gatewayMicros = new Map<string, number[]>(gatewayVariants.map((v) => [v, []]));
for (let round = 1; round <= 2 * SLICES; round++) {
  for (const variant of gatewayVariants.map((_, i) => gatewayVariants[(i + round - 1) % gatewayVariants.length]!)) {
    const child = Bun.spawn([process.execPath, new URL("./trace-overhead.ts", import.meta.url).pathname], {
      env: { ...process.env, TRACE_VARIANT: variant, OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}` },
      stdout: "pipe",
    });
    const out = await new Response(child.stdout).text();
    if ((await child.exited) !== 0) throw new Error(`trace-overhead.ts (${variant}) failed`);
    gatewayMicros.get(variant)!.push(JSON.parse(out.trim().split("\n").at(-1)!).cpuMicrosPerRequest);
  }
}
await collector.stop(true);

const percent = (ratio: number) => `${ratio >= 1 ? "+" : ""}${((ratio - 1) * 100).toFixed(1)} %`;
const rows = variants.flatMap(({ name }) =>
  PATHS.map((path) => {
    const ratios = paired.get(name)!.get(path)!;
    const sorted = [...ratios].sort((a, b) => a - b);
    return {
      stack: name,
      path,
      "CPU ms per request (median)": median(perRequest.get(name)!.get(path)!).toFixed(3),
      requests: requests.get(name)!.get(path)!,
      "cost against nothing observed, same slice (median)": name === variants[0].name ? "" : percent(median(ratios)),
      "middle half of slices": name === variants[0].name ? "" : `${percent(sorted[Math.floor(sorted.length / 4)]!)} .. ${percent(sorted[Math.ceil((3 * sorted.length) / 4) - 1]!)}`,
      // A set of stacks can be luckier or not at boot for all its slices: each set's own median.
      "each set of stacks": name === variants[0].name ? "" : Array.from({ length: ROUNDS }, (_, r) => percent(median(ratios.slice(r * SLICES, (r + 1) * SLICES)))).join(" "),
    };
  }),
);
const none = median(gatewayMicros.get("none")!);
const gatewayRows = gatewayVariants.map((variant) => {
  const micros = median(gatewayMicros.get(variant)!);
  return {
    "gateway alone (in-process client)": gatewayNames[variant],
    "CPU µs per request (median)": micros.toFixed(1),
    runs: gatewayMicros.get(variant)!.map((m) => m.toFixed(1)).join(" "),
    "added µs": variant === "none" ? "" : (micros - none).toFixed(1),
  };
});
console.log();
printTable(rows);
console.log();
printTable(gatewayRows);
console.log(`\nspans received by the OTLP receiver: ${spansReceived}`);
const out = new URL("./observability-cost.json", import.meta.url).pathname;
writeFileSync(out, JSON.stringify({ seconds: SECONDS, rounds: ROUNDS, slices: SLICES, spansReceived, rows, gatewayAlone: gatewayRows }, null, 2) + "\n");
console.log(`written to ${out}`);
