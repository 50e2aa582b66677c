// OpenTelemetry traces, off unless OTEL_EXPORTER_OTLP_ENDPOINT is set: only then is the SDK
// loaded and the interceptors installed; otherwise the API's no-op tracer answers and calls
// between processes carry no extra header. Context crosses processes as a W3C traceparent:
// Connect headers, and a `trace` field in BullMQ job data.
//
// Sampling is decided here, once, where a trace starts (a request at the gateway, a call or a job
// that arrives without a traceparent), before any span exists. A kept trace runs in its span's
// context, so its calls and jobs join it. A trace left out runs in no context at all (an active
// context costs the gateway about 4.6 µs per request in Bun, more than the rest of tracing):
// whatever it calls or hands on carries a traceparent with flag 00, as does any call or job made
// outside a kept trace, and nothing that arrives with flag 00 makes a span or starts a trace. So
// only work entering the system starts traces, and a left-out one leaves no fragment anywhere.
// The SDK's own sampler only follows parents.
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Context, type Span } from "@opentelemetry/api";
import type { Interceptor } from "@connectrpc/connect";
import { REQUEST_ID_HEADER, currentRequestId, usableRequestId } from "./request-context.ts";

const tracer = trace.getTracer("article-generation-service");

let enabled = false;
let shutdown: () => Promise<void> = async () => {};
/** The share of traces starting in this process that are kept. */
let keptShare = 1;

/**
 * The share of new traces to keep, read from OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG as
 * the SDK would (default parentbased_always_on). A trace that arrives with a traceparent follows
 * its caller's decision whichever sampler is named.
 */
export function keptShareOf(env: Record<string, string | undefined>): number {
  const sampler = env.OTEL_TRACES_SAMPLER?.trim().toLowerCase() || "parentbased_always_on";
  if (sampler.endsWith("always_off")) return 0;
  if (!sampler.endsWith("traceidratio")) return 1;
  const share = Number(env.OTEL_TRACES_SAMPLER_ARG ?? 1);
  return Number.isFinite(share) && share >= 0 && share <= 1 ? share : 1;
}

const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));
const randomBytes = new Uint8Array(4096);
let randomUsed = randomBytes.length;

/** `bytes` random bytes as lowercase hex, never all zeros (an invalid W3C id). */
function randomHex(bytes: number): string {
  if (randomUsed + bytes > randomBytes.length) {
    crypto.getRandomValues(randomBytes);
    randomUsed = 0;
  }
  let hex = "";
  let any = 0;
  for (let i = randomUsed; i < randomUsed + bytes; i++) {
    hex += HEX[randomBytes[i]];
    any |= randomBytes[i];
  }
  randomUsed += bytes;
  return any ? hex : randomHex(bytes);
}

// The SDK's own generator writes each id through a Buffer and hex-encodes it, a tenth of the
// gateway's CPU per request in a profile with traces on; this one reads a pool of random bytes
// through a table.
const idGenerator = { generateTraceId: () => randomHex(16), generateSpanId: () => randomHex(8) };

/** Whether spans are exported (OTEL_EXPORTER_OTLP_ENDPOINT set and the SDK started). */
export const tracingEnabled = () => enabled;

/**
 * The batch span processor's settings from the standard OTEL_BSP_* variables, read as the SDK
 * used to read them itself (its 3.x line leaves that to the caller): a value that is not a
 * positive whole number means the default.
 */
export function spanBatchingOf(env: Record<string, string | undefined>) {
  const positive = (name: string) => {
    const value = Number(env[name]?.trim() || Number.NaN);
    return Number.isSafeInteger(value) && value > 0 ? value : undefined;
  };
  return {
    scheduledDelayMillis: positive("OTEL_BSP_SCHEDULE_DELAY"),
    exportTimeoutMillis: positive("OTEL_BSP_EXPORT_TIMEOUT"),
    maxQueueSize: positive("OTEL_BSP_MAX_QUEUE_SIZE"),
    maxExportBatchSize: positive("OTEL_BSP_MAX_EXPORT_BATCH_SIZE"),
  };
}

/** Starts the SDK when OTEL_EXPORTER_OTLP_ENDPOINT is set; call before any client or server is made. */
export async function initTracing(serviceName: string, env: Record<string, string | undefined> = process.env): Promise<void> {
  if (enabled || !env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()) return;
  const [{ TracerProvider, BatchSpanProcessor, ParentBasedSampler, AlwaysOnSampler }, { OTLPTraceExporter }, { resourceFromAttributes }, { W3CTraceContextPropagator }, { AsyncLocalStorageContextManager }] =
    await Promise.all([
      import("@opentelemetry/sdk-trace"),
      import("@opentelemetry/exporter-trace-otlp-http"),
      import("@opentelemetry/resources"),
      import("@opentelemetry/core"),
      import("@opentelemetry/context-async-hooks"),
    ]);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ "service.name": env.OTEL_SERVICE_NAME?.trim() || serviceName }),
    // Roots are only ever started for traces already chosen to be kept (see openSpan).
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    idGenerator,
    // OTLP/HTTP with JSON bodies to <endpoint>/v1/traces.
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter(), ...spanBatchingOf(env) })],
  });
  // What the 2.x node provider's register() did: the global provider, the W3C trace-context
  // propagator and an AsyncLocalStorage context manager.
  trace.setGlobalTracerProvider(provider);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  enabled = true;
  keptShare = keptShareOf(env);
  shutdown = () => provider.shutdown();
}

/** Sends the spans still buffered (on shutdown). */
export const flushTracing = () => shutdown().catch(() => {});

/** The active span's trace id, if a span is recording (the logger adds it to each line). */
export function activeTraceId(): string | undefined {
  if (!enabled) return undefined;
  const span = trace.getActiveSpan();
  return span?.isRecording() ? span.spanContext().traceId : undefined;
}

const headerGetter = {
  keys: (carrier: Headers) => [...carrier.keys()],
  get: (carrier: Headers, key: string) => carrier.get(key) ?? undefined,
};
const headerSetter = { set: (carrier: Headers, key: string, value: string) => carrier.set(key, value) };

/** Whether a trace starting here is kept: the configured share of them. */
const newTraceKept = () => keptShare >= 1 || Math.random() < keptShare;

// A well-formed traceparent: version 00, trace id, parent id, flags (W3C Trace Context).
const TRACEPARENT = /^00-[0-9a-f]{32}-[0-9a-f]{16}-([0-9a-f]{2})$/;

/**
 * Where a request or call enters this process: a span and the context to run in when its trace is
 * kept, nothing when it is left out. With a traceparent its caller's decision is followed; without
 * one a trace starts, kept at the configured share. Most work is left out, and this is on every
 * request's path, so the decision is read from the header itself (a random draw when there is
 * none) before anything of the context API runs: a left-out request costs a header lookup.
 */
export function openIncomingSpan(headers: Headers, describe: () => { name: string; attributes: Attributes }, kind: SpanKind): { span: Span; context: Context } | undefined {
  const traceparent = headers.get("traceparent");
  const flags = traceparent === null ? undefined : TRACEPARENT.exec(traceparent)?.[1];
  if (flags === undefined) {
    // No usable parent: the start of a trace.
    return newTraceKept() ? startSpan(describe, kind, ROOT_CONTEXT) : undefined;
  }
  if ((parseInt(flags, 16) & TraceFlags.SAMPLED) === 0) return undefined;
  return startSpan(describe, kind, propagation.extract(ROOT_CONTEXT, headers, headerGetter));
}

/** The traceparent of work done outside any kept trace: fresh ids, flag 00 (not sampled). */
const leftOutTraceparent = () => `00-${idGenerator.generateTraceId()}-${idGenerator.generateSpanId()}-00`;

/** The kept span running now, if any. */
function keptSpan(): Span | undefined {
  const span = trace.getActiveSpan();
  return span?.isRecording() ? span : undefined;
}

/** The current trace as a traceparent, for work handed on through a queue; undefined when tracing is off. */
export function currentTraceparent(): string | undefined {
  if (!enabled) return undefined;
  if (!keptSpan()) return leftOutTraceparent();
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/**
 * Where work enters this process (a request, a call, a job): a span and the context to run in when
 * its trace is kept, nothing when it is left out. A parent's decision is followed; with no parent a
 * trace starts, kept at the configured share. `describe` names the span, only for a kept trace.
 */
export function openSpan(describe: () => { name: string; attributes: Attributes }, kind: SpanKind, parent: Context): { span: Span; context: Context } | undefined {
  const parentSpan = trace.getSpanContext(parent);
  const kept = parentSpan ? (parentSpan.traceFlags & TraceFlags.SAMPLED) !== 0 : newTraceKept();
  return kept ? startSpan(describe, kind, parent) : undefined;
}

/** Every span names the request it works for (request-context.ts), as every log line does. */
const REQUEST_ID_ATTRIBUTE = "request.id";

function startSpan(describe: () => { name: string; attributes: Attributes }, kind: SpanKind, parent: Context): { span: Span; context: Context } {
  const { name, attributes } = describe();
  const requestId = attributes[REQUEST_ID_ATTRIBUTE] === undefined ? currentRequestId() : undefined;
  const span = tracer.startSpan(name, { kind, attributes: requestId ? { ...attributes, [REQUEST_ID_ATTRIBUTE]: requestId } : attributes }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/** Runs fn in `opened`'s span and context, or as it is when the trace is left out; a thrown error marks the span failed. */
function runIn<T>(opened: { span: Span; context: Context } | undefined, fn: (span?: Span) => Promise<T>): Promise<T> {
  if (!opened) return fn();
  const { span } = opened;
  return context.with(opened.context, async () => {
    try {
      return await fn(span);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Runs fn in a child span of the kept trace running now; outside one it is fn itself (it starts no trace). */
export function inSpan<T>(name: string, attributes: Attributes, fn: (span?: Span) => Promise<T>): Promise<T> {
  if (!enabled || !keptSpan()) return fn();
  return runIn(openSpan(() => ({ name, attributes }), SpanKind.INTERNAL, context.active()), fn);
}

/** Continues a trace handed on through a queue job (its `trace` field) in a consumer span, or starts one. */
export function inJobSpan<T>(name: string, traceparent: string | undefined, attributes: Attributes, fn: () => Promise<T>): Promise<T> {
  if (!enabled) return fn();
  const parent = traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
  return runIn(openSpan(() => ({ name, attributes }), SpanKind.CONSUMER, parent), fn);
}

const rpcSpan = (req: { service: { typeName: string }; method: { name: string } }) => ({
  name: `${req.service.typeName}/${req.method.name}`,
  attributes: { "rpc.system": "connect_rpc", "rpc.service": req.service.typeName, "rpc.method": req.method.name },
});

/**
 * Server side of Connect calls: a span per call of a kept trace, continuing the caller's
 * traceparent or starting a trace. It opens before the call takes up its caller's request id
 * (call-log.ts), so it reads the id from the metadata.
 */
export function traceServerInterceptor(): Interceptor {
  return (next) => (req) =>
    runIn(
      openIncomingSpan(
        req.header,
        () => {
          const described = rpcSpan(req);
          const requestId = usableRequestId(req.header.get(REQUEST_ID_HEADER));
          return requestId ? { ...described, attributes: { ...described.attributes, [REQUEST_ID_ATTRIBUTE]: requestId } } : described;
        },
        SpanKind.SERVER,
      ),
      () => next(req),
    );
}

/** Client side of Connect calls: a span per call of a kept trace and its traceparent in the request headers; flag 00 otherwise. */
export function traceClientInterceptor(): Interceptor {
  return (next) => (req) => {
    if (!keptSpan()) {
      req.header.set("traceparent", leftOutTraceparent());
      return next(req);
    }
    return runIn(openSpan(() => rpcSpan(req), SpanKind.CLIENT, context.active()), () => {
      propagation.inject(context.active(), req.header, headerSetter);
      return next(req);
    });
  };
}
