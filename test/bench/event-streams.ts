// P7: open article event streams (GET /v1/articles/{id}/events) held by one gateway: its memory
// and CPU per open stream, with the streams spread over articles that stay running meanwhile.
import { readFileSync } from "node:fs";
import http from "node:http";
import type { BenchContext } from "./context.ts";
import { rssMiB, type Figure } from "./measure.ts";
import { benchWorkflow, createBenchArticle } from "./workflows.ts";

const STREAMS_PER_ARTICLE = 20;
const HOLD_MS = 10_000;

/** User plus system CPU seconds the process has used. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export async function measureEventStreams(ctx: BenchContext, streams: number): Promise<Figure[]> {
  const gateway = ctx.stack.processes.get("gateway")!.pid;
  // Articles whose one step outlasts the measurement, so their streams stay open.
  const type = await benchWorkflow(ctx, "streamed", ["[[sim:sleep=600000]] Write about {title}."]);
  const articles: string[] = [];
  for (let i = 0; i < Math.ceil(streams / STREAMS_PER_ARTICLE); i++) articles.push((await createBenchArticle(ctx, type, `Streamed article ${i}`)).externalId);

  Bun.gc(true);
  await Bun.sleep(1000);
  const rssBefore = rssMiB(gateway)!;
  const abort = new AbortController();
  // node:http rather than fetch: Bun's fetch holds at most 256 connections in flight, and every
  // open stream is one.
  const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
  const opened: Promise<void>[] = [];
  let open = 0;
  const openStream = (id: string, i: number) =>
    new Promise<void>((resolve, reject) => {
      const request = http.get(`${ctx.stack.baseUrl}/v1/articles/${id}/events`, { agent, signal: abort.signal, headers: { authorization: `Bearer ${ctx.token}` } }, (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          return reject(new Error(`stream ${i} answered ${res.statusCode}`));
        }
        open++;
        // Read and drop whatever arrives (the first state, heartbeats) until the end.
        res.on("data", () => {});
        res.on("end", resolve);
        res.on("error", () => resolve());
      });
      request.on("error", (error) => (abort.signal.aborted ? resolve() : reject(error)));
    });
  for (let i = 0; i < streams; i++) {
    opened.push(openStream(articles[i % articles.length]!, i));
    // Opened in small bursts, as clients arrive.
    if (i % 100 === 99) await Bun.sleep(50);
  }
  const deadline = Date.now() + 60_000;
  while (open < streams) {
    if (Date.now() > deadline) throw new Error(`only ${open} of ${streams} event streams opened within 60 s`);
    await Bun.sleep(100);
  }
  await Bun.sleep(2000);
  const rssOpen = rssMiB(gateway)!;
  const cpuStart = cpuSeconds(gateway);
  await Bun.sleep(HOLD_MS);
  const cpuHeld = cpuSeconds(gateway) - cpuStart;
  abort.abort();
  await Promise.allSettled(opened);
  // The articles would otherwise run for ten minutes more.
  await Promise.all(articles.map((id) => ctx.api.post(`/v1/articles/${id}/cancel`)));

  const perStreamKiB = ((rssOpen - rssBefore) * 1024) / streams;
  const cpuPerStreamMs = (cpuHeld * 1000) / (HOLD_MS / 1000) / streams;
  return [
    {
      id: "P7 memory/stream",
      what: `gateway RSS growth per open event stream (${streams} streams over ${articles.length} running articles)`,
      value: perStreamKiB,
      unit: "KiB",
      goal: "≤ 64 KiB",
      met: perStreamKiB <= 64,
      detail: { "RSS before MiB": rssBefore, "RSS open MiB": rssOpen },
    },
    {
      id: "P7 CPU/stream",
      what: `gateway CPU per open, idle event stream (held ${HOLD_MS / 1000} s)`,
      value: cpuPerStreamMs,
      unit: "ms/s",
      goal: "≤ 0.05 ms/s",
      met: cpuPerStreamMs <= 0.05,
      detail: { "gateway CPU %": (cpuHeld / (HOLD_MS / 1000)) * 100 },
    },
  ];
}
