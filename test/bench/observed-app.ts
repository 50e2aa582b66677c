// The gateway's request observer around an app that does almost nothing else: one Elysia route
// answering remembered JSON text (as a poll of a remembered article does) that reads the request's
// URL and its credential, as the gateway does on every request (its request limits measure the
// URL; Bun builds that string on the first read, several thousand instructions, and keeps it).
// What a request costs here beyond the bare app is what metrics and traces cost the gateway. Used
// by trace-overhead.ts (CPU time) and instruction-counts.ts (instructions, under callgrind). The
// tracer provider is global: one variant per process.
import { Elysia } from "elysia";
import { initTracing, flushTracing } from "../../services/kit/src/tracing.ts";
import { observeRequests } from "../../gateway/src/plugins/observability.ts";

/** none: nothing observed; off: metrics; sampled: metrics and 1% of traces; every: metrics and every trace. */
export type ObservedVariant = "none" | "off" | "sampled" | "every";

/**
 * Starts the app for `variant` on a free port. Spans go to the OTLP receiver at
 * OTEL_EXPORTER_OTLP_ENDPOINT, every 500 ms unless OTEL_BSP_SCHEDULE_DELAY says otherwise.
 */
export async function startObservedApp(variant: ObservedVariant) {
  if (variant === "off" || variant === "none") delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  process.env.OTEL_TRACES_SAMPLER = variant === "sampled" ? "parentbased_traceidratio" : "parentbased_always_on";
  process.env.OTEL_TRACES_SAMPLER_ARG = "0.01";
  process.env.OTEL_BSP_SCHEDULE_DELAY ??= "500";
  await initTracing("gateway");

  const body = JSON.stringify({ data: { id: 1, title: "Remembered", content: "x".repeat(13_000) } });
  const app = new Elysia().get("/v1/articles/:id", ({ request }) =>
    request.url.length <= 8192 && request.headers.get("authorization")
      ? new Response(body, { headers: { "content-type": "application/json;charset=utf-8" } })
      : new Response(null, { status: 401 }),
  );
  observeRequests(app, { metrics: variant !== "none" });
  app.listen({ port: 0, hostname: "127.0.0.1" });
  return {
    url: `http://127.0.0.1:${app.server!.port}/v1/articles/1`,
    async stop() {
      await flushTracing();
      await app.stop(true);
    },
  };
}

const hex = (bytes: number) => Array.from(crypto.getRandomValues(new Uint8Array(bytes)), (b) => b.toString(16).padStart(2, "0")).join("");

export interface PollOptions {
  /** Each poll carries a sampled traceparent (see poll). */
  traced?: boolean;
  /** The API key sent (the observed app takes any). */
  token?: string;
  /** Polls in flight at once (32 unless set). */
  concurrency?: number;
}

/**
 * Sends `count` polls; returns how long they took and how many were not answered 200. `traced`:
 * each carries a sampled traceparent, so a stack with traces on keeps every one whatever its
 * sampler (the caller's decision is followed): a warm-up that runs the tracing code as often as
 * the rest, as a long-running gateway has.
 */
export async function poll(url: string, count: number, { traced = false, token = "ak_bench", concurrency = 32 }: PollOptions = {}): Promise<{ seconds: number; failed: number }> {
  const started = performance.now();
  let next = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next++ < count) {
        const headers: Record<string, string> = { authorization: `Bearer ${token}` };
        if (traced) headers.traceparent = `00-${hex(16)}-${hex(8)}-01`;
        const response = await fetch(url, { headers });
        await response.text();
        if (response.status !== 200) failed++;
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, failed };
}
