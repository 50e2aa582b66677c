// `npm run bench:observability`: what metrics and traces cost the hot paths. Boots the stack
// four times — nothing observed (METRICS_PORT=0, no OTLP endpoint), metrics (the default),
// metrics plus every trace exported to an OTLP/HTTP receiver in this process, and metrics plus
// one trace in a hundred (OTEL_TRACES_SAMPLER) — and loads each hot path
// in each: polling one article, listing 20, and creating articles that then generate to
// completion. The cost is read as CPU per request, summed over every process of the stack and
// the Postgres backends of its database (from /proc), which the machine's drift between stacks moves far less than
// throughput; throughput and p99 are printed beside it. BENCH_SECONDS sets each load (default 10).
// Writes test/bench/observability-cost.json.
import { writeFileSync } from "node:fs";
import { openBenchStack, type BenchContext } from "./context.ts";
import { cpuMs, load, printTable, type LoadResult } from "./measure.ts";
import { benchWorkflow, createBenchArticle, waitForArticles } from "./workflows.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);

// Receives the exported spans (OTLP/HTTP JSON) and answers at once, as a collector would.
let spansReceived = 0;
const collector = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  async fetch(request) {
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

interface Reading {
  path: string;
  load: LoadResult;
  /** CPU ms of all the stack's processes and Postgres per request (per created article for creation). */
  cpuPerRequest: number;
}

/**
 * Runs `work` and returns the CPU ms that the stack's processes and the Postgres backends serving
 * its database spent meanwhile (not other databases' backends: other work may share the machine).
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

async function readHotPaths(ctx: BenchContext): Promise<Reading[]> {
  const ms = ctx.seconds * 1000;
  const polledType = await benchWorkflow(ctx, "polled", ["[[sim:words=1000]] Write about {title}."]);
  const ids: number[] = [];
  for (let i = 0; i < 20; i++) ids.push((await createBenchArticle(ctx, polledType, `Polled article ${i}`, { target_word_count: 1000 })).id);
  await waitForArticles(ctx, ids, "completed");
  await Bun.sleep(1000); // originality checks and settlements of the seeded articles
  const readings: Reading[] = [];
  const measure = async (path: string, once: () => Promise<boolean>, concurrency: number) => {
    const { result, cpu } = await stackCpu(ctx, () => load(path, once, { concurrency, durationMs: ms }));
    readings.push({ path, load: result, cpuPerRequest: cpu / result.requests });
  };
  await measure("GET /v1/articles/{id}", async () => (await ctx.api.get(`/v1/articles/${ids[0]}`)).status === 200, 32);
  await measure("GET /v1/articles?per_page=20", async () => (await ctx.api.get("/v1/articles?per_page=20&status=completed")).status === 200, 32);

  // Creation, then the generation of what was created: CPU per article from POST to completed.
  const echoType = await benchWorkflow(ctx, "echo", ["[[sim:words=100]] Write about {title}."]);
  const created: number[] = [];
  let n = 0;
  const { result, cpu } = await stackCpu(ctx, async () => {
    const result = await load(
      "POST /v1/articles",
      async () => {
        const res = await createBenchArticle(ctx, echoType, `Created ${n++}`).catch(() => undefined);
        if (res) created.push(res.id);
        return res !== undefined;
      },
      { concurrency: 16, durationMs: ms },
    );
    await waitForArticles(ctx, created, "completed");
    return result;
  });
  readings.push({ path: "POST /v1/articles → completed", load: result, cpuPerRequest: cpu / created.length });
  return readings;
}

const results = new Map<string, Reading[]>();
for (const variant of variants) {
  console.log(`stack with ${variant.name}…`);
  const bench = await openBenchStack({ seconds: SECONDS, env: variant.env });
  try {
    results.set(variant.name, await readHotPaths(await bench.tenant()));
  } finally {
    await bench.close();
  }
}
await collector.stop(true);

const plain = results.get(variants[0].name)!;
const rows = [...results].flatMap(([name, readings]) =>
  readings.map((r, i) => ({
    stack: name,
    path: r.path,
    "CPU ms per request": r.cpuPerRequest.toFixed(3),
    "CPU cost": name === variants[0].name ? "" : `${(((r.cpuPerRequest - plain[i].cpuPerRequest) / plain[i].cpuPerRequest) * 100).toFixed(1)} %`,
    "req/s": Math.round(r.load.perSecond),
    "p99 ms": r.load.p99ms.toFixed(1),
  })),
);
console.log();
printTable(rows);
console.log(`\nspans received by the OTLP receiver: ${spansReceived}`);
const out = new URL("./observability-cost.json", import.meta.url).pathname;
writeFileSync(out, JSON.stringify({ seconds: SECONDS, spansReceived, rows }, null, 2) + "\n");
console.log(`written to ${out}`);
