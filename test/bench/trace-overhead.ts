// The gateway's own metrics and tracing work per request, measured apart from everything else: an
// Elysia app with one route answering remembered JSON text (as a poll of a remembered article
// does), wrapped by the gateway's request observer, called in-process. Run once per variant in a
// process of its own (the tracer provider is global): TRACE_VARIANT=none (nothing observed), off
// (metrics, no traces), sampled (metrics and 1% of traces) or every. Prints CPU µs per request.
// Spans go to the OTLP receiver at OTEL_EXPORTER_OTLP_ENDPOINT (the parent's), so the export's
// cost in this process counts.
import { Elysia } from "elysia";
import { initTracing, flushTracing } from "../../services/kit/src/tracing.ts";
import { observeRequests } from "../../gateway/src/plugins/observability.ts";

const variant = process.env.TRACE_VARIANT ?? "off";
if (variant === "off" || variant === "none") delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
process.env.OTEL_TRACES_SAMPLER = variant === "sampled" ? "parentbased_traceidratio" : "parentbased_always_on";
process.env.OTEL_TRACES_SAMPLER_ARG = "0.01";
process.env.OTEL_BSP_SCHEDULE_DELAY = "500";
await initTracing("gateway");

const body = JSON.stringify({ data: { id: 1, title: "Remembered", content: "x".repeat(13_000) } });
// The handler reads the credential, as the gateway's does on every request.
const app = new Elysia().get("/v1/articles/:id", ({ request }) =>
  request.headers.get("authorization") ? new Response(body, { headers: { "content-type": "application/json;charset=utf-8" } }) : new Response(null, { status: 401 }),
);
observeRequests(app, { metrics: variant !== "none" });
app.listen({ port: 0, hostname: "127.0.0.1" });
const url = `http://127.0.0.1:${app.server!.port}/v1/articles/1`;

const REQUESTS = Number(process.env.TRACE_REQUESTS ?? 20_000);
const CONCURRENCY = 32;
async function run(count: number) {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < count) await (await fetch(url, { headers: { authorization: "Bearer ak_bench" } })).text();
    }),
  );
}
// Warm the JIT, and let the first export load its HTTP client before anything is measured.
await run(REQUESTS / 4);
await Bun.sleep(Number(process.env.OTEL_BSP_SCHEDULE_DELAY ?? 5000) + 200);
const before = process.cpuUsage();
await run(REQUESTS);
const used = process.cpuUsage(before);
await flushTracing();
app.stop(true);
console.log(JSON.stringify({ variant, cpuMicrosPerRequest: (used.user + used.system) / REQUESTS }));
