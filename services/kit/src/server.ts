// The two listeners every service runs, both serving the same handlers behind the same
// interceptors: gRPC (with gRPC-Web and Connect) on node:http2 for outside clients and probes,
// and the Connect protocol over HTTP/1.1 on Bun.serve for the project's own processes, which
// costs about a third of the CPU per call of Bun's node:http2 (docs/performance-history.md, item 1). Both carry
// the standard grpc.health.v1 service, the caller check (workload identity and the service's
// access table), domain-error mapping, and a graceful drain on SIGTERM.
import http2 from "node:http2";
import { Code, ConnectError, createConnectRouter, type ConnectRouter, type Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { createAsyncIterable, createFetchHandler, type UniversalHandler } from "@connectrpc/connect/protocol";
import { Health, HealthCheckResponse_ServingStatus as Serving } from "../../../proto/gen/grpc/health/v1/health_pb.ts";
import { databaseOutageOf } from "./db.ts";
import { DomainError, toConnectError } from "./errors.ts";
import type { Logger } from "./logger.ts";
import { envInt, failOnConfigError } from "./config.ts";
import { addReflection } from "./reflection.ts";
import { rpcMetricsInterceptor } from "./metrics.ts";
import { authorizeCallers, type ServiceAccess } from "./access-policy.ts";
import type { CallerVerifier } from "./workload-identity.ts";
import type { ListenerTls } from "./tls.ts";
import { callLog } from "./call-log.ts";
import { BOUNDED_COMPRESSIONS, capDeadline, listenerLimits, REQUEST_MESSAGE_BYTES, SERVICE_DEADLINE_CAP_MS, withDeadlineCap } from "./message-limits.ts";
import { traceServerInterceptor, tracingEnabled } from "./tracing.ts";
import { settledWithin } from "./deadline.ts";

export interface ServiceServerOptions {
  name: string;
  /** Connect over HTTP/1.1, for calls between the project's own processes. */
  port: number;
  /** gRPC over HTTP/2, for outside clients (grpcurl, grpc-js) and Kubernetes probes. */
  grpcPort: number;
  host?: string;
  /** Checks each caller's token. */
  verifier: CallerVerifier;
  /** Who may call each served method (access-policy.ts); anything else is refused. */
  access: ServiceAccess[];
  /** What an operator grants beyond the tables (CALLER_GRANTS). */
  grants?: Map<string, Set<string>>;
  logger: Logger;
  routes: (router: ConnectRouter) => void;
  /** Run after the credential check and error mapping, closest to the handlers. */
  interceptors?: Interceptor[];
  /** Count and time every call for Prometheus (default true; false when METRICS_PORT is 0). */
  metrics?: boolean;
  /** The share of successful calls given an access line (ACCESS_LOG_SAMPLE). */
  accessLogSample?: number;
  /** Serve both listeners over TLS (TLS_CERT_FILE, TLS_KEY_FILE). */
  tls?: ListenerTls;
}

export interface ServiceServer {
  port: number;
  grpcPort: number;
  setServing(serving: boolean): void;
  /** Health answers NOT_SERVING from now on, whatever the dependencies do; calls are still taken. */
  stopServing(): void;
  /** Stops taking calls, lets in-flight calls finish (up to graceMs), then closes. */
  drain(graceMs?: number): Promise<void>;
}

/**
 * Domain errors become Connect codes; Postgres out of reach is UNAVAILABLE (callers retry it);
 * anything else unexpected is logged and answered INTERNAL.
 */
function mapDomainErrors(logger: Logger): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (error) {
      if (error instanceof DomainError) throw toConnectError(error);
      if (error instanceof ConnectError) throw error;
      const outage = databaseOutageOf(error);
      if (outage) {
        logger.warn("database unavailable", { method: req.method.name, error: outage });
        throw new ConnectError("the service's database is unavailable", Code.Unavailable);
      }
      logger.error("unexpected error", { method: req.method.name, error: (error as Error).stack ?? String(error) });
      throw new ConnectError("internal error", Code.Internal);
    }
  };
}

/** The health check's service name whose answer is only "the process answers" (Kubernetes liveness). */
export const LIVENESS_SERVICE = "liveness";

export async function startServiceServer(opts: ServiceServerOptions): Promise<ServiceServer> {
  let status = Serving.SERVING;
  let draining = false;
  // Health watchers waiting for the next change of status.
  const statusWatchers = new Set<() => void>();
  const setStatus = (next: Serving) => {
    if (next === status) return;
    status = next;
    for (const notify of statusWatchers) notify();
  };
  let inFlight = 0;
  let idle: (() => void) | undefined;
  const trackCalls: Interceptor = (next) => async (req) => {
    inFlight++;
    try {
      return await next(req);
    } finally {
      if (--inFlight === 0) idle?.();
    }
  };
  const allCallsDone = () => (inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => (idle = resolve)));
  // The span first (the caller's trace continues through everything below), then the metrics,
  // which see each call's final code, refused credentials included.
  const observe = [...(tracingEnabled() ? [traceServerInterceptor()] : []), ...(opts.metrics === false ? [] : [rpcMetricsInterceptor()])];
  const interceptors = [...observe, trackCalls, callLog(opts.logger, opts.accessLogSample ?? 1), authorizeCallers({ verifier: opts.verifier, access: opts.access, grants: opts.grants, logger: opts.logger }), mapDomainErrors(opts.logger), ...(opts.interceptors ?? [])];
  const routes = (router: ConnectRouter) => {
    // "" (the whole process) and each served service follow readiness; LIVENESS_SERVICE is
    // SERVING whenever the process answers, so a dependency outage never gets it restarted.
    const statusOf = (service: string) => {
      if (service === LIVENESS_SERVICE) return Serving.SERVING;
      if (service === "" || servedServices.has(service)) return status;
      throw new ConnectError(`unknown service ${service}`, Code.NotFound);
    };
    // Watch answers an unknown service with SERVICE_UNKNOWN and keeps watching, as the health
    // protocol has it (Check answers NOT_FOUND).
    const watchedStatusOf = (service: string) => (service === LIVENESS_SERVICE || service === "" || servedServices.has(service) ? statusOf(service) : Serving.SERVICE_UNKNOWN);
    router.service(Health, {
      check: (req) => ({ status: statusOf(req.service) }),
      async *watch(req, ctx) {
        let last = watchedStatusOf(req.service);
        yield { status: last };
        while (!ctx.signal.aborted) {
          await new Promise<void>((resolve) => {
            const wake = () => {
              statusWatchers.delete(wake);
              ctx.signal.removeEventListener("abort", wake);
              resolve();
            };
            statusWatchers.add(wake);
            ctx.signal.addEventListener("abort", wake);
          });
          const now = watchedStatusOf(req.service);
          if (now !== last && !ctx.signal.aborted) yield { status: (last = now) };
        }
      },
    });
    opts.routes(router);
  };
  const servedServices = new Set<string>();
  const host = opts.host ?? "0.0.0.0";

  const limits = listenerLimits(SERVICE_DEADLINE_CAP_MS);
  // The project's own clients send nothing compressed (clients.ts): the Connect listener takes none.
  const router = createConnectRouter({ interceptors, ...limits, acceptCompression: [] });
  routes(router);
  for (const h of router.handlers) servedServices.add(h.service.typeName);
  const handlers = new Map(router.handlers.map((h) => [h.requestPath, h.method.methodKind === "unary" ? unaryFetchHandler(h) : createFetchHandler(h, { httpVersion: "1.1" })]));
  const connect = Bun.serve({
    port: opts.port,
    hostname: host,
    ...(opts.tls ? { tls: { cert: opts.tls.cert, key: opts.tls.key } } : {}),
    // Callers keep connections open between calls; an idle one is closed after two minutes.
    idleTimeout: 120,
    // A port held by another process is an error (EADDRINUSE), never a shared listener.
    reusePort: false,
    // A body without a declared length stops here; one that declares too much never reaches this (unaryFetchHandler).
    maxRequestBodySize: REQUEST_MESSAGE_BYTES + ENVELOPE_BYTES,
    fetch(request) {
      capDeadline(request.headers, SERVICE_DEADLINE_CAP_MS);
      const url = request.url;
      const start = url.indexOf("/", url.indexOf("//") + 2);
      const query = url.indexOf("?", start);
      const handler = handlers.get(query < 0 ? url.slice(start) : url.slice(start, query));
      return handler ? handler(request) : new Response(null, { status: 404 });
    },
  });
  // gRPC last: Kubernetes probes it, so once it answers both listeners are up. Only it carries
  // reflection (grpcurl, grpcui): a bidirectional stream, which HTTP/1.1 cannot carry anyway.
  const grpcAdapter = connectNodeAdapter({ interceptors, ...limits, acceptCompression: BOUNDED_COMPRESSIONS, routes: (router) => { routes(router); addReflection(router); } });
  const grpcHandler = withDeadlineCap(grpcAdapter, SERVICE_DEADLINE_CAP_MS);
  const grpc = opts.tls ? http2.createSecureServer({ cert: opts.tls.cert, key: opts.tls.key }, grpcHandler) : http2.createServer(grpcHandler);
  const stopRenewals = opts.tls ? renewCertificates(opts.tls, grpc as http2.Http2SecureServer, opts.logger) : () => {};
  await new Promise<void>((resolve, reject) => {
    grpc.once("error", reject);
    grpc.listen(opts.grpcPort, host, () => resolve());
  });
  const address = grpc.address();
  const grpcPort = typeof address === "object" && address ? address.port : opts.grpcPort;

  opts.logger.info("serving", { connectPort: connect.port, grpcPort });

  const stopServing = () => {
    draining = true;
    setStatus(Serving.NOT_SERVING);
  };
  return {
    port: connect.port!,
    grpcPort,
    setServing: (serving) => {
      // A draining server stays NOT_SERVING whatever its dependencies do.
      if (!draining) setStatus(serving ? Serving.SERVING : Serving.NOT_SERVING);
    },
    stopServing,
    async drain(graceMs = 10_000) {
      stopServing();
      stopRenewals();
      const grpcClosed = new Promise<void>((resolve) => grpc.close(() => resolve()));
      const connectClosed = connect.stop(false);
      await settledWithin(allCallsDone(), graceMs);
      await settledWithin(Promise.all([grpcClosed, connectClosed]), 500);
    },
  };
}

/** The head of one enveloped message of a stream (flags and length). */
const ENVELOPE_BYTES = 5;

/**
 * A unary method over HTTP/1.1 with whole bodies both ways. Connect's fetch adapter reads each
 * request through a stream reader and answers with a ReadableStream, which Bun writes outside
 * its batching of a response: the status line, each header's name, value and line end and the
 * body each left in a send of their own (nine sends of one reply, counted with strace). An
 * answer whose body is already bytes goes out in one. Connect's handler still does the protocol
 * (headers, limits, compression, errors); only the adaptation to fetch is this.
 */
function unaryFetchHandler(handler: UniversalHandler): (request: Request) => Promise<Response> {
  return async (request) => {
    // A body declared larger than the limit is not read: Connect refuses it by its declared
    // length alone (RESOURCE_EXHAUSTED).
    const declared = Number(request.headers.get("content-length") ?? 0);
    const answer = await handler({
      httpVersion: "1.1",
      method: request.method,
      url: request.url,
      header: request.headers,
      body: createAsyncIterable(declared > REQUEST_MESSAGE_BYTES ? [] : [new Uint8Array(await request.arrayBuffer())]),
      signal: request.signal,
    });
    const chunks: Uint8Array[] = [];
    if (answer.body) for await (const chunk of answer.body) chunks.push(chunk);
    const body = chunks.length === 1 ? chunks[0] : chunks.length === 0 ? null : Buffer.concat(chunks);
    return new Response(body as Uint8Array<ArrayBuffer> | null, { status: answer.status, headers: answer.header });
  };
}

/**
 * A renewed certificate (its files replaced, as cert-manager does well before expiry) is served
 * by the gRPC listener from its next connection, without a restart. The Connect listener, which
 * only the project's own processes reach, takes it at the process's next start.
 */
export function renewCertificates(tls: ListenerTls, server: http2.Http2SecureServer, logger: Logger): () => void {
  const timer = setInterval(() => {
    const renewed = tls.renewed();
    if (!renewed) return;
    server.setSecureContext(renewed);
    logger.info("serving a renewed TLS certificate");
  }, 60_000);
  timer.unref?.();
  return () => clearInterval(timer);
}

/**
 * SHUTDOWN_DELAY_MS: how long a process keeps serving after SIGTERM with its readiness already
 * false, so that load balancers that follow readiness (Kubernetes' endpoints, a mesh, a proxy)
 * stop sending it requests before its listeners close. 0 on Kubernetes, where the manifests'
 * preStop hook waits before SIGTERM is even sent.
 */
const shutdownDelayMs = failOnConfigError(() => envInt(process.env, "SHUTDOWN_DELAY_MS", 0, { min: 0, max: 120_000 }));

/**
 * The common shutdown of every process, once, on SIGTERM or SIGINT: `stopServing` (readiness goes
 * false at once), SHUTDOWN_DELAY_MS of serving on, then `stop` (listeners closed, in-flight work
 * drained), then exit.
 */
export function onShutdown(logger: Logger, stop: () => Promise<void>, stopServing: () => void = () => {}): void {
  let stopping = false;
  const handle = (signal: string) => {
    if (stopping) return;
    stopping = true;
    stopServing();
    logger.info("draining", { signal, delayMs: shutdownDelayMs });
    Bun.sleep(shutdownDelayMs)
      .then(stop)
      .catch((error) => logger.error("error while draining", { error }))
      .finally(() => process.exit(0));
  };
  process.on("SIGTERM", () => handle("SIGTERM"));
  process.on("SIGINT", () => handle("SIGINT"));
}
