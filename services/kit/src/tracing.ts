// OpenTelemetry traces, off unless OTEL_EXPORTER_OTLP_ENDPOINT is set: only then is the SDK
// loaded and the interceptors installed; otherwise the API's no-op tracer answers and calls
// between processes carry no extra header. Context crosses processes as a W3C traceparent:
// Connect headers, and a `trace` field in BullMQ job data.
import { context, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from "@opentelemetry/api";
import type { Interceptor } from "@connectrpc/connect";

export const tracer = trace.getTracer("article-generation-service");

let enabled = false;
let shutdown: () => Promise<void> = async () => {};

/** Whether spans are exported (OTEL_EXPORTER_OTLP_ENDPOINT set and the SDK started). */
export const tracingEnabled = () => enabled;

/** Starts the SDK when OTEL_EXPORTER_OTLP_ENDPOINT is set; call before any client or server is made. */
export async function initTracing(serviceName: string, env: Record<string, string | undefined> = process.env): Promise<void> {
  if (enabled || !env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()) return;
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import("@opentelemetry/sdk-trace-node"),
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/resources"),
  ]);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ "service.name": env.OTEL_SERVICE_NAME?.trim() || serviceName }),
    // OTLP/HTTP with JSON bodies to <endpoint>/v1/traces; batching follows the OTEL_BSP_* variables.
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  // Registers the W3C trace-context propagator and an AsyncLocalStorage context manager.
  provider.register();
  enabled = true;
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

/** Runs fn in a span; a thrown error marks it failed. With tracing off it is fn itself. */
export function inSpan<T>(name: string, attributes: Attributes, fn: (span?: Span) => Promise<T>, opts: { kind?: SpanKind; parent?: Context } = {}): Promise<T> {
  if (!enabled) return fn();
  return tracer.startActiveSpan(name, { kind: opts.kind ?? SpanKind.INTERNAL, attributes }, opts.parent ?? context.active(), async (span) => {
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
  const parent = traceparent ? propagation.extract(context.active(), { traceparent }) : context.active();
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

/** Client side of Connect calls: a span per call and its traceparent in the request headers. */
export function traceClientInterceptor(): Interceptor {
  return (next) => (req) =>
    inSpan(`${req.service.typeName}/${req.method.name}`, { "rpc.system": "connect_rpc", "rpc.service": req.service.typeName, "rpc.method": req.method.name }, () => {
      propagation.inject(context.active(), req.header, headerSetter);
      return next(req);
    }, { kind: SpanKind.CLIENT });
}
