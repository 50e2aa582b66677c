// Prometheus metrics of every process (prom-client), served on a port of its own (METRICS_PORT).
// Labels are bounded: routes are templates, methods come from the protobuf descriptors, and no
// label ever carries an article, user or job id. Requests and calls are recorded in plain cells
// (metric-series.ts), made once per label set.
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Queue } from "bullmq";
import client from "prom-client";
import type { Logger } from "./logger.ts";
import { CounterSeries, HistogramSeries, type CounterCell, type HistogramCell } from "./metric-series.ts";

export const registry = client.register;

// Latency buckets in seconds, from a cached read to a slow model call.
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const LONG_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

let defaultsCollected = false;

/** prom-client's per-space heap gauges, left out (see initMetrics). */
const HEAP_SPACE_METRICS = ["nodejs_heap_space_size_total_bytes", "nodejs_heap_space_size_used_bytes", "nodejs_heap_space_size_available_bytes"];

/** Process metrics (CPU, memory, event loop) plus `service` as a label on every series. */
export function initMetrics(service: string): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  registry.setDefaultLabels({ service });
  // The event-loop delay is sampled every 100 ms rather than prom-client's default 10 ms: a lag
  // still shows, and the sampling timer's own wakes were about 3 ms of CPU a second per process
  // (idle stack, seven processes: 75-98 -> 64-80 ms/s).
  client.collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: 100 });
  // Bun answers v8.getHeapSpaceStatistics() by walking the whole heap, and prom-client asks it on
  // every scrape: 47 ms of the event loop with 300,000 objects alive, a stall each time Prometheus
  // scrapes. The heap's size and use stay (nodejs_heap_size_*, from process.memoryUsage()).
  for (const name of HEAP_SPACE_METRICS) registry.removeSingleMetric(name);
}

// ---- gRPC / Connect server calls ---------------------------------------------------------

const rpcRequests = new CounterSeries("rpc_server_requests_total", "Calls handled, by service, method and status code.");
const rpcDuration = new HistogramSeries("rpc_server_duration_seconds", "Time to handle a call, by service and method.", LATENCY_BUCKETS);

// Connect code number → label, and per method its series (one per code, made on first use).
// Connect's Code has no entry for success (0): it is "ok" here.
const CODE_NAMES = { 0: "ok", ...Object.fromEntries(Object.entries(Code).filter(([, v]) => typeof v === "number").map(([k, v]) => [v, k.replace(/[A-Z]/g, (c, i) => (i ? "_" : "") + c.toLowerCase())])) } as Record<number, string>;
interface MethodSeries {
  duration: HistogramCell;
  byCode: (CounterCell | undefined)[];
  service: string;
  method: string;
}
// Keyed by the method's descriptor: one object per method for the life of the process.
const methodSeries = new WeakMap<object, MethodSeries>();

function seriesOf(service: string, method: string, key: object): MethodSeries {
  let series = methodSeries.get(key);
  if (!series) {
    series = { duration: rpcDuration.cell({ rpc_service: service, rpc_method: method }), byCode: [], service, method };
    methodSeries.set(key, series);
  }
  return series;
}

function countCall(series: MethodSeries, code: number, started: number): void {
  series.duration.observe((performance.now() - started) / 1000);
  (series.byCode[code] ??= rpcRequests.cell({ rpc_service: series.service, rpc_method: series.method, code: CODE_NAMES[code] ?? "unknown" })).value++;
}

/** Counts and times every call: first in the server's chain, so refused credentials count too. */
export function rpcMetricsInterceptor(): Interceptor {
  return (next) => async (req) => {
    const series = seriesOf(req.service.typeName, req.method.name, req.method);
    const started = performance.now();
    try {
      const res = await next(req);
      countCall(series, 0, started);
      return res;
    } catch (error) {
      countCall(series, error instanceof ConnectError ? error.code : Code.Unknown, started);
      throw error;
    }
  };
}

// ---- HTTP (gateway) ------------------------------------------------------------------------

export const httpRequests = new CounterSeries("http_requests_total", "Requests answered, by route template, method and status.");
export const httpDuration = new HistogramSeries("http_request_duration_seconds", "Time to answer a request, by route template and method.", LATENCY_BUCKETS);

// ---- BullMQ --------------------------------------------------------------------------------

// Live work only: a finished job leaves its queue at once (queues.ts); bullmq_jobs_processed_total counts them.
const QUEUE_STATES = ["waiting", "active", "delayed"] as const;
const watchedQueues = new Set<Queue>();
new client.Gauge({
  name: "bullmq_queue_jobs",
  help: "Jobs in a queue by state (read from Redis at scrape time).",
  labelNames: ["queue", "state"] as const,
  async collect() {
    this.reset();
    await Promise.all(
      [...watchedQueues].map(async (queue) => {
        const counts = await queue.getJobCounts(...QUEUE_STATES).catch(() => undefined);
        if (counts) for (const state of QUEUE_STATES) this.labels(queue.name, state).set(counts[state] ?? 0);
      }),
    );
  },
});

/** Reports the queue's depth on each scrape (nothing is polled between scrapes). */
export function watchQueueDepth(queue: Queue): void {
  watchedQueues.add(queue);
}

export const jobsProcessed = new client.Counter({ name: "bullmq_jobs_processed_total", help: "Job activations a worker of this process ended, by queue and outcome (completed or failed; active jobs are in bullmq_queue_jobs).", labelNames: ["queue", "outcome"] as const });

/** Counts a worker's completed and failed job activations. */
export function countWorkerJobs(worker: { name: string; on(event: "completed" | "failed", listener: () => void): unknown }): void {
  const completed = jobsProcessed.labels(worker.name, "completed");
  const failed = jobsProcessed.labels(worker.name, "failed");
  worker.on("completed", () => completed.inc());
  worker.on("failed", () => failed.inc());
}

// ---- Generation (runner) -------------------------------------------------------------------

export const stepDuration = new client.Histogram({ name: "generation_step_duration_seconds", help: "Time of one pipeline step, by mode (live or batch).", labelNames: ["mode"] as const, buckets: LONG_BUCKETS });
export const articleDuration = new client.Histogram({ name: "generation_article_duration_seconds", help: "Time of one generation run (one job activation), by outcome.", labelNames: ["outcome"] as const, buckets: LONG_BUCKETS });
const modelTokens = new client.Counter({ name: "model_tokens_total", help: "Tokens billed by the model provider, by catalog model and kind (prompt or completion).", labelNames: ["model", "kind"] as const });
const modelCost = new client.Counter({ name: "model_cost_usd_total", help: "Cost of model calls in US dollars, by catalog model.", labelNames: ["model"] as const });
export const modelCalls = new client.Counter({ name: "model_calls_total", help: "Model calls, by catalog model and outcome (ok or error).", labelNames: ["model", "outcome"] as const });

// Provider pacing (generation-runner/src/domain/paced-call.ts): one series per budget, i.e. per
// catalog model, the image model, a batch submission or a search provider, so they are few.
export const providerAnswers = new client.Counter({ name: "provider_calls_total", help: "Provider calls made by the runner, by budget and outcome (ok, rate_limited for a 429, outage, timeout, elsewhere for 404 or unconfigured, final for other refusals).", labelNames: ["budget", "outcome"] as const });
export const capacityWaits = new client.Counter({ name: "provider_calls_waited_total", help: "Provider calls that had to wait, by budget and reason (capacity: the shared budget was spent; rate_limited: a 429 paused it; provider_unavailable: the circuit breaker was open).", labelNames: ["budget", "reason"] as const });
const BREAKER_STATES = { closed: 0, half_open: 1, open: 2 } as const;
const breakerState = new client.Gauge({ name: "provider_circuit_state", help: "The model's circuit breaker as this runner last saw it: 0 closed, 1 half-open (a probe is out), 2 open.", labelNames: ["model"] as const });
export function recordBreakerState(model: string, state: keyof typeof BREAKER_STATES): void {
  breakerState.labels(model).set(BREAKER_STATES[state]);
}
/** Articles waiting in the accounts' lines for a worker slot (kit/src/fair-dispatch.ts), read from Redis at each scrape. */
export function watchArticlesInLines(read: () => Promise<number>): void {
  new client.Gauge({
    name: "generation_articles_in_lines",
    help: "New articles waiting in their accounts' lines for a free worker slot of the fleet (read from Redis at scrape time; every runner reports the same lines).",
    async collect() {
      const n = await read().catch(() => undefined);
      if (n !== undefined) this.set(n);
    },
  });
}

/** Calls waiting their turn for a budget in this runner, read at each scrape. */
export function watchWaitingCalls(read: () => Map<string, number>): void {
  new client.Gauge({
    name: "provider_calls_waiting",
    help: "Provider calls of this runner waiting their turn for a budget or their model's return, by budget: in the job or parked (the job delayed, holding no worker slot).",
    labelNames: ["budget"] as const,
    collect() {
      for (const [budget, n] of read()) this.labels(budget).set(n);
    },
  });
}
export const budgetLimit = new client.Gauge({ name: "provider_budget_limit", help: "The limit a budget is paced to (the tighter of the operator's and the provider's), per minute, by budget and kind (requests or tokens); 0: none known.", labelNames: ["budget", "kind"] as const });
export const budgetRemaining = new client.Gauge({ name: "provider_budget_remaining", help: "What the provider last reported left of a budget (x-ratelimit-remaining-*), by budget and kind (requests or tokens).", labelNames: ["budget", "kind"] as const });

const usageSeries = new Map<string, { prompt: ReturnType<typeof modelTokens.labels>; completion: ReturnType<typeof modelTokens.labels>; cost: ReturnType<typeof modelCost.labels> }>();

/** Tokens and cost (picodollars) of one model reply. Model ids come from the catalog, so they are few. */
export function recordModelUsage(model: string, promptTokens: number, completionTokens: number, picodollars: bigint): void {
  let s = usageSeries.get(model);
  if (!s) usageSeries.set(model, (s = { prompt: modelTokens.labels(model, "prompt"), completion: modelTokens.labels(model, "completion"), cost: modelCost.labels(model) }));
  s.prompt.inc(promptTokens);
  s.completion.inc(completionTokens);
  s.cost.inc(Number(picodollars) / 1e12);
}

// ---- Webhooks and quota --------------------------------------------------------------------

export const webhookAttempts = new client.Counter({ name: "webhook_attempts_total", help: "Webhook delivery attempts, by outcome (delivered, retry, given_up, not_sent, interrupted).", labelNames: ["outcome"] as const });
export const mailSends = new client.Counter({ name: "mail_sends_total", help: "Mail send attempts from accounts-billing's outbox, by kind (invitation, password_reset, sign_up) and outcome (sent, retry, given_up, not_needed: the user set a password meanwhile or was disabled).", labelNames: ["kind", "outcome"] as const });
export const quotaReservations = new client.Counter({ name: "quota_reservations_total", help: "Word-quota reservations, by outcome (reserved, refused, error).", labelNames: ["outcome"] as const });

// ---- Serving -------------------------------------------------------------------------------

export interface MetricsServer {
  port: number;
  stop(): Promise<void>;
}

/**
 * GET /metrics on its own port (0: none). `other` answers any other request (the gateway's
 * queue dashboard); without it they get 404.
 */
export function startMetricsServer(opts: { port: number; logger: Logger; host?: string; other?: (request: Request) => Response | Promise<Response> }): MetricsServer | undefined {
  if (opts.port === 0) return undefined;
  const server = Bun.serve({
    port: opts.port,
    hostname: opts.host ?? "0.0.0.0",
    reusePort: false,
    async fetch(request) {
      const path = new URL(request.url).pathname;
      if (path === "/metrics" && request.method === "GET") {
        return new Response(await registry.metrics(), { headers: { "content-type": registry.contentType } });
      }
      return opts.other ? opts.other(request) : new Response("Not found", { status: 404 });
    },
  });
  opts.logger.info("metrics listening", { metricsPort: server.port });
  return { port: server.port!, stop: async () => void (await server.stop(true)) };
}
