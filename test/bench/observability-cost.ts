// `npm run bench:observability`: what metrics and traces cost the hot paths. Boots the stack in
// four variants: nothing observed (METRICS_PORT=0, no OTLP endpoint), metrics (the default),
// metrics plus every trace exported to an OTLP/HTTP receiver in this process, and metrics plus
// one trace in a hundred (OTEL_TRACES_SAMPLER). In each it loads the hot paths: polling one
// article, listing 20, and creating articles that then generate to completion. The cost is read
// as CPU per request, summed over every process of the stack and the Postgres backends of its
// database (from /proc), which moves less than throughput with the machine's drift; BENCH_ROUNDS
// rounds (default 3) each boot every variant once, and each figure is the median of its rounds.
// BENCH_SECONDS sets each load (default 5). Then the gateway's tracing work alone, without the
// stack's drift (trace-overhead.ts, twice as many rounds). Writes test/bench/observability-cost.json.
import { writeFileSync } from "node:fs";
import { openBenchStack, type BenchContext } from "./context.ts";
import { cpuMs, load, printTable, type LoadResult } from "./measure.ts";
import { benchWorkflow, createBenchArticle, waitForArticles } from "./workflows.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

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

// Rounds go through every variant in turn, so the machine's drift over time falls on all alike,
// each round starting one variant later (a variant's place in a round had shown in its figures:
// the first, always the same, read lowest); each figure is the median of its rounds.
const readings = new Map<string, Reading[][]>(variants.map((v) => [v.name, []]));
for (let round = 1; round <= ROUNDS; round++) {
  for (const variant of variants.map((_, i) => variants[(i + round - 1) % variants.length]!)) {
    console.log(`round ${round} of ${ROUNDS}: stack with ${variant.name}…`);
    const bench = await openBenchStack({ seconds: SECONDS, env: variant.env });
    try {
      readings.get(variant.name)!.push(await readHotPaths(await bench.tenant()));
    } finally {
      await bench.close();
    }
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

// The gateway's own tracing work apart from the stack's drift: test/bench/trace-overhead.ts in a
// process per variant, rounds interleaved, CPU µs per request (its client's included).
const gatewayVariants = ["off", "sampled", "every"] as const;
const gatewayMicros = new Map<string, number[]>(gatewayVariants.map((v) => [v, []]));
for (let round = 1; round <= ROUNDS * 2; round++) {
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
const gatewayRows = gatewayVariants.map((variant) => {
  const micros = median(gatewayMicros.get(variant)!);
  const off = median(gatewayMicros.get("off")!);
  return {
    "gateway alone (in-process client)": variant === "off" ? "metrics, no traces" : variant === "sampled" ? "metrics + 1% of traces" : "metrics + every trace",
    "CPU µs per request (median)": micros.toFixed(1),
    rounds: gatewayMicros.get(variant)!.map((m) => m.toFixed(1)).join(" "),
    "added µs": variant === "off" ? "" : (micros - off).toFixed(1),
  };
});
const paths = readings.get(variants[0].name)![0]!.map((r) => r.path);
const cpuOf = (name: string, i: number) => readings.get(name)!.map((round) => round[i]!.cpuPerRequest);
const rows = variants.flatMap(({ name }) =>
  paths.map((path, i) => {
    const cpu = cpuOf(name, i);
    const plain = median(cpuOf(variants[0].name, i));
    return {
      stack: name,
      path,
      "CPU ms per request (median)": median(cpu).toFixed(3),
      "rounds": cpu.map((c) => c.toFixed(3)).join(" "),
      "CPU cost": name === variants[0].name ? "" : `${(((median(cpu) - plain) / plain) * 100).toFixed(1)} %`,
      "req/s (median)": Math.round(median(readings.get(name)!.map((round) => round[i]!.load.perSecond))),
    };
  }),
);
console.log();
printTable(rows);
console.log();
printTable(gatewayRows);
console.log(`\nspans received by the OTLP receiver: ${spansReceived}`);
const out = new URL("./observability-cost.json", import.meta.url).pathname;
writeFileSync(out, JSON.stringify({ seconds: SECONDS, rounds: ROUNDS, spansReceived, rows, gatewayAlone: gatewayRows }, null, 2) + "\n");
console.log(`written to ${out}`);
