// `npm run bench:instructions`: what metrics and traces cost the gateway, counted in instructions
// instead of CPU time. CPU time per request on a shared 2-core machine spreads by several percent
// from run to run, as much as the costs being measured; valgrind's callgrind counts the
// instructions a process executes, which the rest of the machine does not change. Two parts, each
// in four variants (nothing observed, metrics, metrics + 1% of traces, metrics + every trace):
//
// "alone": a server of observed-app.ts runs under callgrind per variant and run, one thread counted
// apart from another. The load comes from this process, outside valgrind. Each server is warmed
// with WARM polls that all carry a sampled traceparent (so the tracing code has run as often as the
// rest, as in a gateway that has been up a while; see observed-app.ts), then polled N1 times in
// one run and N2 in another: a request's cost is the difference between the two runs over N2 - N1,
// so start-up and warm-up cancel out.
//
// "stack": the stack `npm start` runs, with the gateway under callgrind, polled for one completed
// ~1,000-word article as a client polls a finished article (cached poll). The gateway's counters
// are read at points within one run (callgrind_control --dump): after the warm-up, after
// STACK_POLLS polls at 8 in flight, after SPARSE polls 1.1 s apart, after STACK_POLLS polls again.
// Besides its requests the gateway works by the clock: the second-long memories of keys,
// authorizations and articles are read again once a second, and dependency checks and timers run.
// Under callgrind a second holds a few hundred polls instead of thousands, so that share would
// weigh far more than in a real run; the sparse polls measure it (each pays the once-a-second
// reads, as the dense load does once a second), and it is taken out of the dense phases by their
// duration. One boot of a stack reads up to 10% apart from another (docs/observability-costs.md):
// INSTRUCTION_ROUNDS boots each variant again.
//
// Spans are exported in batches of 64 spans rather than every 500 ms: under callgrind a second of
// wall-clock time holds ~50 times fewer requests, and a timer would export far smaller batches
// than a real run does. The main thread (the JavaScript that runs the request) is reported apart
// from the other threads (JIT compilers, the collector's helpers, Bun's I/O), whose share depends
// on timing and so varies more.
//
// INSTRUCTION_PART=alone or stack runs one part (both by default); INSTRUCTION_ROUNDS (default 1)
// repeats every variant; N1, N2 and WARM default to 2,000, 10,000 and 5,000, STACK_POLLS to 3,000.
// The stack part needs a valgrind that decodes every SSE4.2 string instruction Bun's HTTP client
// uses (its gateway calls the services with fetch): Debian's 3.19 and 3.24 do not know `pcmpestri
// $0x4`; `bash test/bench/build-valgrind.sh` builds one that does into .local/valgrind, which is then
// used (VALGRIND names another). About 20 minutes a part and round on a 2-core machine. Writes
// test/bench/instruction-counts.json.
import { existsSync, readdirSync, readFileSync, rmSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { poll, startObservedApp, type ObservedVariant } from "./observed-app.ts";
import { printTable } from "./measure.ts";
import { openBenchStack } from "./context.ts";
import { benchWorkflow, createBenchArticle, waitForArticles } from "./workflows.ts";

const VARIANTS: [ObservedVariant, string][] = [
  ["none", "nothing observed"],
  ["off", "metrics"],
  ["sampled", "metrics + 1% of traces"],
  ["every", "metrics + every trace"],
];

/** Instructions in one callgrind output file (one thread, one dump). */
const instructionsIn = (file: string) => Number(readFileSync(file, "utf8").match(/^(?:summary|totals): (\d+)/m)?.[1] ?? NaN);

/** Runs `run` for every job, two at a time (one per core). */
async function inPairs<T>(jobs: T[], run: (job: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all([0, 1].map(async () => {
    while (next < jobs.length) await run(jobs[next++]!);
  }));
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
const over = (value: number, of: number) => `${value >= of ? "+" : ""}${Math.round(value - of).toLocaleString("en")} (${value >= of ? "+" : ""}${(((value - of) / of) * 100).toFixed(1)} %)`;

async function measure() {
  const root = fileURLToPath(new URL("../../", import.meta.url));
  const valgrind = process.env.VALGRIND ?? (existsSync(`${root}.local/valgrind/bin/valgrind`) ? `${root}.local/valgrind/bin/valgrind` : Bun.which("valgrind"));
  const version = valgrind && Bun.which(valgrind) ? Bun.spawnSync([valgrind, "--version"], { stdout: "pipe", stderr: "pipe" }) : undefined;
  if (!valgrind || !version?.success) {
    console.error("bench:instructions needs valgrind (Debian package valgrind, or bash test/bench/build-valgrind.sh)");
    process.exit(1);
  }
  const parts = (process.env.INSTRUCTION_PART ?? "alone,stack").split(",");
  const ROUNDS = Number(process.env.INSTRUCTION_ROUNDS ?? 1);
  if (parts.includes("stack") && !fetchRunsUnder(valgrind)) {
    console.error(`${valgrind} cannot run Bun's HTTP client, which the gateway calls its services with: bash test/bench/build-valgrind.sh builds one that can`);
    process.exit(1);
  }
  const collector = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      await request.arrayBuffer();
      return Response.json({});
    },
  });
  const exportInBatches = {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}`,
    OTEL_BSP_SCHEDULE_DELAY: "3600000",
    OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "64",
  };
  const dir = mkdtempSync(join(tmpdir(), "instruction-counts-"));
  // A part not run keeps its last results.
  const resultsFile = new URL("./instruction-counts.json", import.meta.url);
  const results: Record<string, unknown> = existsSync(resultsFile) ? JSON.parse(readFileSync(resultsFile, "utf8")) : {};
  const valgrindVersion = version.stdout.toString().trim();
  try {
    if (parts.includes("alone")) results.alone = { valgrind: valgrindVersion, ...(await countAlone({ valgrind, dir, rounds: ROUNDS, env: exportInBatches })) };
    if (parts.includes("stack")) results.stack = { valgrind: valgrindVersion, ...(await countInStack({ valgrind, dir, rounds: ROUNDS, env: exportInBatches })) };
  } finally {
    await collector.stop(true);
    rmSync(dir, { recursive: true, force: true });
  }
  writeFileSync(resultsFile, JSON.stringify(results, null, 2) + "\n");
}

/** Whether a fetch made under `valgrind` comes back (Debian's valgrind stops Bun's HTTP client with SIGILL). */
function fetchRunsUnder(valgrind: string): boolean {
  const script = 'const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("ok") }); console.log(await (await fetch(s.url)).text()); s.stop(true);';
  const run = Bun.spawnSync([valgrind, "--tool=none", "--log-file=/dev/null", process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
  return run.success && run.stdout.toString().trim() === "ok";
}

interface PartOptions {
  valgrind: string;
  dir: string;
  rounds: number;
  /** Where and how spans are exported (the variants with traces). */
  env: Record<string, string>;
}

/** The gateway's request observer around an app that does nothing else (observed-app.ts). */
async function countAlone({ valgrind, dir, rounds, env }: PartOptions) {
  const N1 = Number(process.env.N1 ?? 2_000);
  const N2 = Number(process.env.N2 ?? 10_000);
  const WARM = Number(process.env.WARM ?? 5_000);

  /** Instructions of one server run (warm-up, then `polls` polls): the main thread's and all threads'. */
  async function countedRun(variant: ObservedVariant, polls: number, tag: string): Promise<{ main: number; all: number }> {
    const out = join(dir, `${tag}.out`);
    const server = Bun.spawn([valgrind, "--tool=callgrind", "--separate-threads=yes", `--callgrind-out-file=${out}`, process.execPath, import.meta.path], {
      env: { ...process.env, ...env, INSTRUCTION_COUNT_SERVER: variant },
      stdout: "pipe",
      stderr: "pipe",
    });
    const stderr = new Response(server.stderr).text();
    const reader = server.stdout.getReader();
    let printed = "";
    while (!printed.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the ${variant} server stopped before listening:\n${(await stderr).slice(-2000)}`);
      printed += new TextDecoder().decode(value);
    }
    const url = printed.match(/LISTENING (\S+)/)![1]!;
    await poll(url, WARM, { traced: true });
    await poll(url, polls);
    server.kill("SIGTERM");
    if ((await server.exited) !== 0) throw new Error(`the ${variant} server failed under callgrind:\n${(await stderr).slice(-2000)}`);
    // One file per thread: <out>-01 is the main thread.
    const threads = readdirSync(dir).filter((f) => f.startsWith(`${tag}.out-`)).sort();
    return { main: instructionsIn(join(dir, threads[0]!)), all: threads.reduce((sum, f) => sum + instructionsIn(join(dir, f)), 0) };
  }

  const counted = new Map<string, { main: number; all: number }>();
  const runs = VARIANTS.flatMap(([variant]) => Array.from({ length: rounds }, (_, round) => [N1, N2].map((polls) => ({ variant, round, polls })))).flat();
  await inPairs(runs, async ({ variant, round, polls }) => {
    const tag = `${variant}-${round}-${polls}`;
    counted.set(tag, await countedRun(variant, polls, tag));
    console.log(`alone ${tag}: ${counted.get(tag)!.main} instructions on the main thread`);
  });
  const perRequest = new Map(
    VARIANTS.map(([variant]) => [
      variant,
      Array.from({ length: rounds }, (_, round) => {
        const [short, long] = [counted.get(`${variant}-${round}-${N1}`)!, counted.get(`${variant}-${round}-${N2}`)!];
        return { main: (long.main - short.main) / (N2 - N1), all: (long.all - short.all) / (N2 - N1) };
      }),
    ]),
  );
  const base = perRequest.get("none")!;
  const rows = VARIANTS.map(([variant, name]) => {
    const counts = perRequest.get(variant)!;
    const main = mean(counts.map((c) => c.main));
    const all = mean(counts.map((c) => c.all));
    return {
      "gateway alone": name,
      "main thread, per request": Math.round(main),
      "against nothing observed": variant === "none" ? "" : over(main, mean(base.map((c) => c.main))),
      "each round": counts.map((c) => Math.round(c.main)).join(" "),
      "all threads, per request": Math.round(all),
      "all threads against nothing observed": variant === "none" ? "" : over(all, mean(base.map((c) => c.all))),
    };
  });
  printTable(rows);
  return { rounds, n1: N1, n2: N2, warm: WARM, rows };
}

/** What the stack runs with in each variant (spans exported as `exportInBatches` says). */
const stackEnv = (variant: ObservedVariant, exportInBatches: Record<string, string>): Record<string, string | undefined> => {
  switch (variant) {
    case "none":
      return { METRICS_PORT: "0", OTEL_EXPORTER_OTLP_ENDPOINT: undefined };
    case "off":
      return { OTEL_EXPORTER_OTLP_ENDPOINT: undefined };
    case "sampled":
      return { ...exportInBatches, OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.01" };
    case "every":
      return { ...exportInBatches, OTEL_TRACES_SAMPLER: "parentbased_always_on" };
  }
};

/** The gateway inside the whole stack, on a cached poll of a completed article. */
async function countInStack({ valgrind, dir, rounds, env }: PartOptions) {
  const POLLS = Number(process.env.STACK_POLLS ?? 3_000);
  const WARM = Number(process.env.WARM ?? 5_000);
  const SPARSE = 10;
  const callgrindControl = join(dirname(valgrind), "callgrind_control");

  /** One stack's gateway: main-thread instructions per poll in each dense phase, and what it does by the clock. */
  async function countedStack(variant: ObservedVariant, tag: string) {
    const out = join(dir, tag);
    const bench = await openBenchStack({
      seconds: 2,
      // Two stacks at once: 3 Postgres connections per service keep them within a server's 100.
      env: { ...stackEnv(variant, env), DATABASE_POOL_SIZE: "3" },
      sqlPoolSize: 2,
      readyTimeoutMs: 300_000,
      // Valgrind runs one thread at a time; --fair-sched hands that turn round in order, so the
      // thread of Bun's HTTP client is not left waiting behind the main thread (calls have deadlines).
      runUnder: { gateway: [valgrind, "--tool=callgrind", "--separate-threads=yes", "--fair-sched=yes", `--callgrind-out-file=${out}`, `--log-file=${out}.log`] },
    });
    try {
      const ctx = await bench.tenant();
      const workflow = await benchWorkflow(ctx, "polled", ["[[sim:words=1000]] Write about {title}."]);
      const { id } = await createBenchArticle(ctx, workflow, "Polled article", { target_word_count: 1000 });
      await waitForArticles(ctx, [id], "completed");
      const url = `${ctx.stack.baseUrl}/v1/articles/${id}`;
      const gateway = ctx.stack.processes.get("gateway")!.pid;
      let dumps = 0;
      /** The main thread's instructions since the last dump. */
      const dump = async () => {
        const control = Bun.spawnSync([callgrindControl, "--dump", String(gateway)], { stdout: "pipe", stderr: "pipe" });
        if (!control.success) throw new Error(`callgrind_control: ${control.stderr}`);
        const file = `${out}.${++dumps}-01`;
        const deadline = performance.now() + 60_000;
        while (!existsSync(file)) {
          if (performance.now() > deadline) throw new Error(`callgrind wrote no ${file}`);
          await Bun.sleep(50);
        }
        return instructionsIn(file);
      };
      const token = ctx.token;
      // Under callgrind the gateway first compiles its code for a while: one request at a time
      // then, so no call or Redis command waits out its timeout behind the others.
      await poll(url, 100, { traced: true, token, concurrency: 1 });
      const warm = await poll(url, WARM, { traced: true, token, concurrency: 8 });
      await dump();
      const first = await poll(url, POLLS, { token, concurrency: 8 });
      const firstCount = await dump();
      const sparseStarted = performance.now();
      let sparseFailed = 0;
      for (let i = 0; i < SPARSE; i++) {
        await Bun.sleep(1_100);
        sparseFailed += (await poll(url, 1, { token, concurrency: 1 })).failed;
      }
      const sparseSeconds = (performance.now() - sparseStarted) / 1000;
      const sparseCount = await dump();
      const second = await poll(url, POLLS, { token, concurrency: 8 });
      const secondCount = await dump();
      // Dense count = c × POLLS + k × seconds, sparse count = c × SPARSE + k × sparseSeconds:
      // c, a poll's own instructions, and k, the gateway's instructions a second besides its polls.
      const perPoll = (count: number, seconds: number) => (count - (sparseCount * seconds) / sparseSeconds) / (POLLS - (SPARSE * seconds) / sparseSeconds);
      const phases = [perPoll(firstCount, first.seconds), perPoll(secondCount, second.seconds)];
      const perSecond = (sparseCount - SPARSE * mean(phases)) / sparseSeconds;
      // Under callgrind a call now and then outlasts its deadline (504): counted and shown, since
      // one such answer among thousands of polls moves the figure by little.
      return { phases, perSecond, pollsPerSecond: (2 * POLLS) / (first.seconds + second.seconds), failed: first.failed + sparseFailed + second.failed, warmFailed: warm.failed };
    } finally {
      await bench.close();
    }
  }

  const counted = new Map<string, Awaited<ReturnType<typeof countedStack>>>();
  const runs = VARIANTS.flatMap(([variant]) => Array.from({ length: rounds }, (_, round) => ({ variant, round })));
  await inPairs(runs, async ({ variant, round }) => {
    const tag = `stack-${variant}-${round}`;
    const result = await countedStack(variant, tag);
    counted.set(tag, result);
    console.log(`${tag}: ${result.phases.map(Math.round).join(" and ")} instructions a poll on the main thread, ${Math.round(result.pollsPerSecond)} polls/s, ${Math.round(result.perSecond).toLocaleString("en")} a second besides`);
  });
  const stacksOf = (variant: ObservedVariant) => Array.from({ length: rounds }, (_, round) => counted.get(`stack-${variant}-${round}`)!);
  const base = mean(stacksOf("none").flatMap((r) => r.phases));
  const rows = VARIANTS.map(([variant, name]) => {
    const runsOf = stacksOf(variant);
    const phases = runsOf.flatMap((r) => r.phases);
    return {
      "gateway in the stack, cached poll": name,
      "main thread, per poll": Math.round(mean(phases)),
      "against nothing observed": variant === "none" ? "" : over(mean(phases), base),
      "each phase": phases.map(Math.round).join(" "),
      "polls/s under callgrind": runsOf.map((r) => Math.round(r.pollsPerSecond)).join(" "),
      "by the clock, a second": runsOf.map((r) => Math.round(r.perSecond).toLocaleString("en")).join(" "),
      "polls not answered 200 (warm-up)": runsOf.map((r) => `${r.failed} (${r.warmFailed})`).join(" "),
    };
  });
  printTable(rows);
  return { rounds, polls: POLLS, warm: WARM, sparse: SPARSE, rows };
}

const SERVER = process.env.INSTRUCTION_COUNT_SERVER as ObservedVariant | undefined;
if (SERVER) {
  // The server of the "alone" part: run under callgrind by countAlone, stopped by SIGTERM.
  const app = await startObservedApp(SERVER);
  process.on("SIGTERM", async () => {
    await app.stop();
    process.exit(0);
  });
  console.log(`LISTENING ${app.url}`);
} else {
  await measure();
}
