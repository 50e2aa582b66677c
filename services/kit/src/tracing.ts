// OpenTelemetry traces, off unless OTEL_EXPORTER_OTLP_ENDPOINT is set: only then is the SDK
// loaded and the interceptors installed; otherwise the API's no-op tracer answers and calls
// between processes carry no extra header. Context crosses processes as a W3C traceparent:
// Connect headers, and a `trace` field in BullMQ job data.
//
// Sampling is decided here, once, where a trace starts (a request, a call or a job with no
// traceparent), before any span exists: a trace left out costs one Math.random and a context
// holding its ids, which every call and job it leads to follows (flag 00), so the SDK never
// makes a span for it anywhere and no process starts a fragment of it. The SDK's own sampler only
// follows parents.
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Context, type Span, type SpanContext } from "@opentelemetry/api";
import type { Interceptor } from "@connectrpc/connect";

export const tracer = trace.getTracer("article-generation-service");

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

/** Starts the SDK when OTEL_EXPORTER_OTLP_ENDPOINT is set; call before any client or server is made. */
export async function initTracing(serviceName: string, env: Record<string, string | undefined> = process.env): Promise<void> {
  if (enabled || !env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()) return;
  const [{ NodeTracerProvider, BatchSpanProcessor, ParentBasedSampler, AlwaysOnSampler }, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import("@opentelemetry/sdk-trace-node"),
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/resources"),
  ]);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ "service.name": env.OTEL_SERVICE_NAME?.trim() || serviceName }),
    // Roots are only ever started for traces already chosen to be kept (see openSpan).
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    idGenerator,
    // OTLP/HTTP with JSON bodies to <endpoint>/v1/traces; batching follows the OTEL_BSP_* variables.
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  // Registers the W3C trace-context propagator and an AsyncLocalStorage context manager.
  provider.register();
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

/** The context an incoming request's traceparent header continues (the current one when it has none). */
export const contextFromHeaders = (headers: Headers): Context =>
  // Most requests carry none: skip the propagators' walk over every header.
  headers.has("traceparent") ? propagation.extract(context.active(), headers, headerGetter) : context.active();

/** The current span as a traceparent, for work handed on through a queue; undefined when tracing is off. */
export function currentTraceparent(): string | undefined {
  if (!enabled) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/**
 * Where a span would start under `parent`: the span when its trace is kept, and the context to run
 * in. A parent's decision is followed; with no parent a new trace starts, kept at the configured
 * share, and one left out gets its ids in a context of its own (flag 00) and no span at all.
 */
export function openSpan(name: string, attributes: Attributes, kind: SpanKind, parent: Context): { span?: Span; context: Context } {
  const parentSpan = trace.getSpanContext(parent);
  const kept = parentSpan ? (parentSpan.traceFlags & TraceFlags.SAMPLED) !== 0 : keptShare >= 1 || Math.random() < keptShare;
  if (!kept) return { context: parentSpan ? parent : leftOutTrace(parent) };
  const span = tracer.startSpan(name, { kind, attributes }, parent);
  return { span, context: trace.setSpan(parent, span) };
}

/**
 * The current span of a trace left out where it started: records nothing, and makes its ids only
 * when something asks for them (a call or a job handing the trace on), which most requests, served
 * from the gateway's memory, never do.
 */
class LeftOutSpan implements Span {
  private ids?: SpanContext;
  spanContext(): SpanContext {
    return (this.ids ??= { traceId: idGenerator.generateTraceId(), spanId: idGenerator.generateSpanId(), traceFlags: TraceFlags.NONE });
  }
  setAttribute() {
    return this;
  }
  setAttributes() {
    return this;
  }
  addEvent() {
    return this;
  }
  addLink() {
    return this;
  }
  addLinks() {
    return this;
  }
  setStatus() {
    return this;
  }
  updateName() {
    return this;
  }
  end() {}
  isRecording() {
    return false;
  }
  recordException() {}
}

const leftOutTrace = (parent: Context): Context => trace.setSpan(parent, new LeftOutSpan());

/** Runs fn in a span (when its trace is kept); a thrown error marks it failed. With tracing off it is fn itself. */
export function inSpan<T>(name: string, attributes: Attributes, fn: (span?: Span) => Promise<T>, opts: { kind?: SpanKind; parent?: Context } = {}): Promise<T> {
  if (!enabled) return fn();
  const active = context.active();
  const opened = openSpan(name, attributes, opts.kind ?? SpanKind.INTERNAL, opts.parent ?? active);
  const span = opened.span;
  if (!span) return opened.context === active ? fn() : context.with(opened.context, fn);
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

/** Continues a trace handed on through a queue job (its `trace` field) in a consumer span. */
export function inJobSpan<T>(name: string, traceparent: string | undefined, attributes: Attributes, fn: () => Promise<T>): Promise<T> {
  if (!enabled) return fn();
  const parent = traceparent ? propagation.extract(ROOT_CONTEXT, { traceparent }) : ROOT_CONTEXT;
  return inSpan(name, attributes, fn, { kind: SpanKind.CONSUMER, parent });
}

/** Server side of Connect calls: a span per call, continuing the caller's traceparent. */
export function traceServerInterceptor(): Interceptor {
  return (next) => (req) =>
    inSpan(`${req.service.typeName}/${req.method.name}`, { "rpc.system": "connect_rpc", "rpc.service": req.service.typeName, "rpc.method": req.method.name }, () => next(req), {
      kind: SpanKind.SERVER,
      parent: contextFromHeaders(req.header),
    });
}

/** Client side of Connect calls: a span per call and its traceparent in the request headers (flag 00 when the trace is left out). */
export function traceClientInterceptor(): Interceptor {
  return (next) => (req) =>
    inSpan(`${req.service.typeName}/${req.method.name}`, { "rpc.system": "connect_rpc", "rpc.service": req.service.typeName, "rpc.method": req.method.name }, () => {
      propagation.inject(context.active(), req.header, headerSetter);
      return next(req);
    }, { kind: SpanKind.CLIENT });
}
