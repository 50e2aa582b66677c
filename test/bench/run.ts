// `npm run bench`: boots the stack `npm start` runs (on free ports, its own database and Redis
// prefix), measures each hot path beside a baseline taken in the same run, and prints a table
// (figure, baseline, ratio, goal, met) that it also writes as JSON to test/bench/results.json.
// BENCH_SECONDS sets each throughput load (default 10); BENCH_ONLY=P1,P2 runs some sections
// (P1 reads, P2 creation, P3 orchestration, P4 articles in flight, P10 the same burst of one-step
// articles over three runner replicas, P5 webhooks, P6 data scale,
// P7 open event streams: BENCH_STREAMS of them, default 2,000; P8 BENCH_PACED_ARTICLES articles,
// default 600, over a provider limited to BENCH_PACED_RPM requests a minute, default 1,200; P9
// Redis bytes per finished article, BENCH_REDIS_ARTICLES of them, default 2,000, on a stack of
// its own over a private Redis and Postgres).
import { cpus, totalmem } from "node:os";
import { writeFileSync } from "node:fs";
import { openBenchStack } from "./context.ts";
import { bundleProcess } from "../../deploy/local/process-bundles.ts";
import type { Stack } from "../../deploy/local/stack.ts";
import { load, printTable, pssMiB, ratioOf, rssMiB, type Figure } from "./measure.ts";
import { measureReads } from "./reads.ts";
import { measureLists } from "./lists.ts";
import { HELD_MS, measureCreation, measureCreationAlone } from "./creation.ts";
import { benchWorkflow } from "./workflows.ts";
import { measureFleetBurst, measureOrchestration, measureRunnerInFlight } from "./orchestration.ts";
import { measureWebhookDeliveries } from "./webhooks.ts";
import { measureDataScale } from "./data-scale.ts";
import { measureEventStreams } from "./event-streams.ts";
import { measurePacing, startLimitedProvider } from "./pacing.ts";
import { measureRedisPerFinishedArticle } from "./redis-footprint.ts";

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const ONLY = process.env.BENCH_ONLY?.split(",").map((s) => s.trim().toUpperCase());
const wanted = (section: string) => !ONLY || ONLY.includes(section);

const machine = {
  cores: cpus().length,
  cpu: cpus()[0]?.model ?? "unknown",
  "memory GiB": Math.round(totalmem() / 2 ** 30),
  bun: Bun.version,
  date: new Date().toISOString(),
};
console.log(`machine: ${machine.cores} cores (${machine.cpu}), ${machine["memory GiB"]} GiB, Bun ${machine.bun}; load generator and every process share the cores`);

const stackRss = (stack: Stack) => [...stack.processes.values()].reduce((sum, p) => sum + (rssMiB(p.pid) ?? 0), 0);

/**
 * Samples the whole stack's resident memory until stopped; the peak is kept, and each process's
 * own peak, to say where the memory went.
 */
function memoryWatch(stack: Stack) {
  let peak = 0;
  const peaks = new Map<string, number>();
  const sample = () => {
    let total = 0;
    for (const [name, p] of stack.processes) {
      const rss = rssMiB(p.pid) ?? 0;
      total += rss;
      peaks.set(name, Math.max(peaks.get(name) ?? 0, rss));
    }
    peak = Math.max(peak, total);
  };
  sample();
  const timer = setInterval(sample, 200);
  return {
    stop: () => {
      clearInterval(timer);
      sample();
      return { peak, byProcess: Object.fromEntries([...peaks].map(([name, rss]) => [`${name} MiB`, rss])) };
    },
  };
}

/** Bun's own fetch against a bare Bun.serve in another process: the HTTP floor of this machine. */
async function httpFloor(bytes: number, concurrency: number) {
  const server = Bun.spawn([process.execPath, new URL("./bare-server.ts", import.meta.url).pathname], { env: { ...process.env, BODY_BYTES: String(bytes) }, stdout: "pipe" });
  try {
    const reader = server.stdout.getReader();
    const port = Number(new TextDecoder().decode((await reader.read()).value).trim());
    const url = `http://127.0.0.1:${port}/`;
    return await load("HTTP floor", async () => (await (await fetch(url)).text()).length > 0, { concurrency, durationMs: SECONDS * 1000 });
  } finally {
    server.kill();
  }
}

/**
 * The memory floor of the stack's parts: RSS of five bare services, a bare gateway (bare-process.ts,
 * bundled as the stack's processes are) and a bare Bun.serve for the simulator, each in a process
 * of its own as the stack's seven are.
 */
async function partsFloorMiB(env: Record<string, string>) {
  const bundle = await bundleProcess(new URL("./bare-process.ts", import.meta.url).pathname);
  const rssOf = async (part: string) => {
    const child = Bun.spawn([process.execPath, bundle], { env: { ...process.env, ...env, PART: part }, stdout: "pipe", stderr: "ignore" });
    const out = await new Response(child.stdout).text();
    if ((await child.exited) !== 0) throw new Error(`bare ${part} process failed`);
    return JSON.parse(out.trim().split("\n").at(-1)!).rssMiB as number;
  };
  const service = await rssOf("service");
  const gateway = await rssOf("gateway");
  const simulator = Bun.spawn([process.execPath, new URL("./bare-server.ts", import.meta.url).pathname], { stdout: "pipe" });
  try {
    await simulator.stdout.getReader().read(); // its port: listening
    await Bun.sleep(2000);
    return { total: 5 * service + gateway + (rssMiB(simulator.pid) ?? 0), service, gateway };
  } finally {
    simulator.kill();
  }
}

const PACED_RPM = Number(process.env.BENCH_PACED_RPM ?? 1200);
const limitedProvider = await startLimitedProvider(PACED_RPM);
const bench = await openBenchStack({ seconds: SECONDS, env: limitedProvider.env });
const stack = bench.stack;
const figures: Figure[] = [];
const round = (n: number) => (Math.abs(n) >= 100 ? Math.round(n).toLocaleString("en-US") : n.toFixed(n >= 10 ? 1 : 2));
/**
 * Keeps a section's figures and says each at once (on stderr, beside the table at the end), so a
 * run stopped or failed midway still shows what it measured.
 */
function record(...measured: Figure[]) {
  for (const f of measured) {
    figures.push(f);
    console.error(`${f.id}: ${round(f.value)} ${f.unit}${f.met === null ? "" : f.met ? " (met)" : " (NOT met)"}`);
  }
}
try {
  await Bun.sleep(2000); // let start-up work settle before reading idle memory
  const idleRss = stackRss(stack);
  const idlePss = [...stack.processes.values()].reduce((sum, p) => sum + (pssMiB(p.pid) ?? 0), 0);
  const ctx = await bench.tenant();
  const floor = await partsFloorMiB({ DATABASE_URL: ctx.databaseUrl, REDIS_URL: stack.env.REDIS_URL ?? "redis://127.0.0.1:6379" });
  record({
    id: "memory idle",
    what: "RSS of the whole stack (5 services, gateway, simulator) after start",
    value: idleRss,
    unit: "MiB",
    baseline: { what: "the parts alone: 5 bare services, a bare gateway and a bare Bun.serve", value: floor.total },
    goal: "≤ 400 MiB",
    met: idleRss <= 400,
    detail: { "PSS MiB": idlePss, "bare service MiB": floor.service, "bare gateway MiB": floor.gateway },
  });

  if (wanted("P1")) {
    const polled = await benchWorkflow(ctx, "polled", ["[[sim:words=1000]] Write about {title}."]);
    const bytes = JSON.stringify((await ctx.api.get("/user")).body).length;
    const floor = await httpFloor(Math.max(bytes, 8_000), 32);
    record({ id: "HTTP floor", what: "Bun fetch → bare Bun.serve, 32 concurrent, 8 KB body", value: floor.perSecond, unit: "req/s", goal: "reference", met: null, detail: { "p50 ms": floor.p50ms, "p99 ms": floor.p99ms } });
    record(...(await measureReads(ctx, polled)));
    record(...(await measureLists(ctx)));
  }
  if (wanted("P2")) {
    const echo = await benchWorkflow(ctx, "echo", ["[[sim:words=100]] Write about {title}."]);
    const floor = await httpFloor(2_000, 16);
    // The stack's footprint under sustained creation with generation alongside, to read beside
    // P4's peak: what a busy stack holds, whatever the burst.
    const watch = memoryWatch(stack);
    const [creation] = await measureCreation(ctx, echo, floor);
    record({ ...creation, detail: { ...creation.detail, "stack peak RSS MiB": watch.stop().peak } });
    const held = await benchWorkflow(ctx, "held", [`[[sim:sleep=${HELD_MS}]] [[sim:words=100]] Write about {title}.`]);
    record(...(await measureCreationAlone(ctx, held)));
  }
  if (wanted("P3")) record(...(await measureOrchestration(ctx)));
  if (wanted("P4")) {
    const watch = memoryWatch(stack);
    record(...(await measureRunnerInFlight(ctx, Number(process.env.BENCH_IN_FLIGHT ?? 1000))));
    const { peak, byProcess } = watch.stop();
    record({ id: "memory peak", what: "RSS of the whole stack at its peak during P4 (detail: each process's own peak)", value: peak, unit: "MiB", goal: "≤ 600 MiB", met: peak <= 600, detail: byProcess });
  }
  if (wanted("P10")) record(...(await measureFleetBurst(ctx, Number(process.env.BENCH_IN_FLIGHT ?? 1000))));
  if (wanted("P5")) record(...(await measureWebhookDeliveries(ctx)));
  if (wanted("P7")) record(...(await measureEventStreams(ctx, Number(process.env.BENCH_STREAMS ?? 2000))));
  if (wanted("P8")) record(...(await measurePacing(ctx, limitedProvider.simulator, PACED_RPM, Number(process.env.BENCH_PACED_ARTICLES ?? 600))));
  if (wanted("P9")) record(...(await measureRedisPerFinishedArticle(SECONDS, Number(process.env.BENCH_REDIS_ARTICLES ?? 2000))));
  // Last: it grows one project to a million articles.
  if (wanted("P6")) record(...(await measureDataScale(ctx)));
} finally {
  await bench.close();
  await limitedProvider.simulator.stop();
}

const rows = figures.map((f) => ({
  figure: f.id,
  what: f.what,
  value: `${round(f.value)} ${f.unit}`,
  baseline: f.baseline ? `${round(f.baseline.value)} (${f.baseline.what})` : "",
  ratio: ratioOf(f) === undefined ? "" : ratioOf(f)!.toFixed(3),
  goal: f.goal,
  met: f.met === null ? "" : f.met ? "yes" : "NO",
  detail: Object.entries(f.detail ?? {})
    .map(([k, v]) => `${k} ${typeof v === "number" ? round(v) : v}`)
    .join(", "),
}));
console.log();
printTable(rows);
const out = new URL("./results.json", import.meta.url).pathname;
writeFileSync(out, JSON.stringify({ machine, seconds: SECONDS, figures: figures.map((f) => ({ ...f, ratio: ratioOf(f) })) }, null, 2) + "\n");
console.log(`\nwritten to ${out}`);
