// `npm run bench:instructions`: what metrics and traces cost the gateway, counted in instructions
// instead of CPU time. CPU time per request on a shared 2-core machine spreads by several percent
// from run to run, as much as the costs being measured; valgrind's callgrind counts the
// instructions a process executes, which the rest of the machine does not change.
//
// For each variant of observed-app.ts (nothing observed, metrics, metrics + 1% of traces, metrics +
// every trace) a server process runs under callgrind, one thread counted apart from another. The
// load comes from this process, outside valgrind. Each server is warmed with WARM polls that all
// carry a sampled traceparent (so the tracing code has run as often as the rest, as in a gateway
// that has been up a while; see observed-app.ts), then polled N1 times in one run and N2 in
// another: a request's cost is the difference between the two runs over N2 - N1, so start-up and
// warm-up cancel out. Spans are exported in batches of 64 spans rather than every 500 ms: under
// callgrind a second of wall-clock time holds ~50 times fewer requests, and a timer would export
// far smaller batches than a real run does. The main thread (the JavaScript that runs the
// request) is reported apart from all threads (the JIT compilers, the collector's helpers and
// Bun's I/O threads, whose share depends on timing and so varies more).
//
// INSTRUCTION_ROUNDS (default 1) repeats every variant; N1, N2 and WARM default to 2,000, 10,000
// and 5,000. Takes ~20 minutes a round on a 2-core machine. Writes test/bench/instruction-counts.json.
import { readdirSync, readFileSync, rmSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { poll, startObservedApp, type ObservedVariant } from "./observed-app.ts";
import { printTable } from "./measure.ts";

const SERVER = process.env.INSTRUCTION_COUNT_SERVER as ObservedVariant | undefined;
if (SERVER) {
  // The server half: run under callgrind by the half below, stopped by SIGTERM.
  const app = await startObservedApp(SERVER);
  process.on("SIGTERM", async () => {
    await app.stop();
    process.exit(0);
  });
  console.log(`LISTENING ${app.url}`);
} else {
  await measure();
}

async function measure() {
  const which = Bun.spawnSync(["valgrind", "--version"], { stdout: "pipe", stderr: "pipe" });
  if (!which.success) {
    console.error("bench:instructions needs valgrind (Debian package valgrind)");
    process.exit(1);
  }
  const ROUNDS = Number(process.env.INSTRUCTION_ROUNDS ?? 1);
  const N1 = Number(process.env.N1 ?? 2_000);
  const N2 = Number(process.env.N2 ?? 10_000);
  const WARM = Number(process.env.WARM ?? 5_000);
  const variants: [ObservedVariant, string][] = [
    ["none", "nothing observed"],
    ["off", "metrics"],
    ["sampled", "metrics + 1% of traces"],
    ["every", "metrics + every trace"],
  ];
  const collector = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      await request.arrayBuffer();
      return Response.json({});
    },
  });
  const dir = mkdtempSync(join(tmpdir(), "instruction-counts-"));

  /** Instructions of one server run (warm-up, then `polls` polls): the main thread's and all threads'. */
  async function countedRun(variant: ObservedVariant, polls: number, tag: string): Promise<{ main: number; all: number }> {
    const out = join(dir, `${tag}.out`);
    const server = Bun.spawn(["valgrind", "--tool=callgrind", "--separate-threads=yes", `--callgrind-out-file=${out}`, process.execPath, import.meta.path], {
      env: {
        ...process.env,
        INSTRUCTION_COUNT_SERVER: variant,
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}`,
        OTEL_BSP_SCHEDULE_DELAY: "3600000",
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "64",
      },
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
    await poll(url, WARM, true);
    await poll(url, polls);
    server.kill("SIGTERM");
    if ((await server.exited) !== 0) throw new Error(`the ${variant} server failed under callgrind:\n${(await stderr).slice(-2000)}`);
    // One file per thread: <out>-01 is the main thread.
    const threads = readdirSync(dir).filter((f) => f.startsWith(`${tag}.out-`)).sort();
    const total = (file: string) => Number(readFileSync(join(dir, file), "utf8").match(/^(?:summary|totals): (\d+)/m)?.[1] ?? NaN);
    return { main: total(threads[0]!), all: threads.reduce((sum, f) => sum + total(f), 0) };
  }

  const counted = new Map<string, { main: number; all: number }>();
  const runs = variants.flatMap(([variant]) => Array.from({ length: ROUNDS }, (_, round) => [N1, N2].map((polls) => ({ variant, round, polls })))).flat();
  // Two servers at once, one per core.
  let next = 0;
  await Promise.all(
    [0, 1].map(async () => {
      while (next < runs.length) {
        const { variant, round, polls } = runs[next++]!;
        const tag = `${variant}-${round}-${polls}`;
        counted.set(tag, await countedRun(variant, polls, tag));
        console.log(`${tag}: ${counted.get(tag)!.main} instructions on the main thread`);
      }
    }),
  );
  const perRequest = new Map(
    variants.map(([variant]) => [
      variant,
      Array.from({ length: ROUNDS }, (_, round) => {
        const [short, long] = [counted.get(`${variant}-${round}-${N1}`)!, counted.get(`${variant}-${round}-${N2}`)!];
        return { main: (long.main - short.main) / (N2 - N1), all: (long.all - short.all) / (N2 - N1) };
      }),
    ]),
  );
  await collector.stop(true);
  rmSync(dir, { recursive: true, force: true });

  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const base = perRequest.get("none")!;
  const rows = variants.map(([variant, name]) => {
    const counts = perRequest.get(variant)!;
    const main = mean(counts.map((c) => c.main));
    const all = mean(counts.map((c) => c.all));
    const over = (value: number, of: number) => (variant === "none" ? "" : `${value >= of ? "+" : ""}${(((value - of) / of) * 100).toFixed(1)} %`);
    return {
      variant: name,
      "main thread, per request": Math.round(main),
      "against nothing observed": over(main, mean(base.map((c) => c.main))),
      "each round": counts.map((c) => Math.round(c.main)).join(" "),
      "all threads, per request": Math.round(all),
      "all threads against nothing observed": over(all, mean(base.map((c) => c.all))),
    };
  });
  printTable(rows);
  writeFileSync(new URL("./instruction-counts.json", import.meta.url), JSON.stringify({ n1: N1, n2: N2, warm: WARM, rounds: ROUNDS, rows }, null, 2) + "\n");
}
