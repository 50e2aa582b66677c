// Gateway process: the public HTTP API on PORT.
import http from "node:http";
import { failOnConfigError } from "../../services/kit/src/config.ts";
import { isPortInUse, portInUseMessage } from "../../services/kit/src/port-in-use.ts";
import { createLogger } from "../../services/kit/src/logger.ts";
import { connectRedis, duplicateConnection, onRedisError } from "../../services/kit/src/redis.ts";
import { redisDependency, serviceDependency, watchDependencies } from "../../services/kit/src/dependency-watch.ts";
import { onShutdown } from "../../services/kit/src/server.ts";
import { buildApp, gatewayCore } from "./app.ts";
import { startPublicGrpcServer, type PublicGrpcServer } from "./grpc/public-grpc-server.ts";
import { loadGatewayConfig } from "./config.ts";
import { CallerVerifier, OwnToken } from "../../services/kit/src/workload-identity.ts";
import { loadListenerTls, trustServiceCa } from "../../services/kit/src/tls.ts";
import { accessLogSample } from "../../services/kit/src/call-log.ts";
import { REQUEST_LIMITS } from "./plugins/request-limits.ts";
import { connectServices } from "./services.ts";
import { initMetrics } from "../../services/kit/src/metrics.ts";
import { collectGarbageWhenQuiet } from "../../services/kit/src/quiet-collection.ts";
import { flushTracing, initTracing } from "../../services/kit/src/tracing.ts";
import { observeRequests } from "./plugins/observability.ts";
import { startAdminServer, type AdminServer } from "./plugins/admin-server.ts";
import { settledWithin } from "../../services/kit/src/deadline.ts";

// Before any client is made: the trace interceptors are installed only when traces are exported.
await initTracing("gateway");
initMetrics("gateway");
const logger = failOnConfigError(() => createLogger("gateway"));
const config = failOnConfigError(() => loadGatewayConfig());
// The gateway's own identity for its calls, and the check of the workloads and operator calling it.
const credential = failOnConfigError(() => new OwnToken(config.identity.tokenFile));
const verifier = new CallerVerifier(config.identity, logger);
// TLS on the public gRPC listener from mounted files, and the authority of the services' https URLs.
const tls = failOnConfigError(() => loadListenerTls());
failOnConfigError(() => trustServiceCa());
// Commands issued in the same tick by concurrent requests go out in one write. While Redis is
// away a command fails at once (or after a second) instead of waiting: the request answers 503.
const redis = connectRedis(config.redisUrl, { enableAutoPipelining: true, enableOfflineQueue: false, commandTimeout: 1000 });
onRedisError(redis, (error) => logger.error("redis error", { error: error.message }));
const subscriber = duplicateConnection(redis, { enableAutoPipelining: false, enableOfflineQueue: true, commandTimeout: undefined });
onRedisError(subscriber, (error) => logger.error("redis error", { error: error.message, connection: "subscriber" }));

// Bun answers a request head over its limit with an empty 431; raised (Bun reads this setting at
// run time) so that the gateway's own, lower limits answer in JSON instead.
(http as { maxHeaderSize: number }).maxHeaderSize = REQUEST_LIMITS.serverHeadBytes;
if (http.maxHeaderSize !== REQUEST_LIMITS.serverHeadBytes) logger.warn("could not raise the HTTP server's header limit; long URLs get an empty 431", { limit: http.maxHeaderSize });

const dependencies = watchDependencies({
  dependencies: [
    redisDependency(config.redisUrl),
    // The services the gateway calls.
    ...(["accountsBilling", "workflowCatalog", "articleStore", "generationRunner", "webhookDispatcher"] as const).map((name) =>
      serviceDependency(name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`), config.services[name], credential),
    ),
  ],
  logger,
  onChange: () => {},
});
let draining = false;
// Every /v1 request counts against its rate limit in Redis: a gateway is ready once its connection
// has come up (later outages are answered per request, not by leaving the load balancer).
let connected = redis.status === "ready";
redis.once("ready", () => (connected = true));
const deps = { clients: connectServices(config, credential), redis, subscriber, redisPrefix: config.redisPrefix, logger, dependencies, draining: () => draining, started: () => connected };
// The HTTP app and the gRPC API share the gates and the operations behind them.
const core = gatewayCore(deps);
const app = buildApp(deps, core);
// Metrics when their port is on; request ids and the access line (info) always.
const accessLogShare = failOnConfigError(() => accessLogSample());
observeRequests(app, { metrics: config.metricsPort !== 0, logger, accessLogSample: accessLogShare });
let admin: AdminServer | undefined;
try {
  if (config.metricsPort !== 0) admin = await startAdminServer({ port: config.metricsPort, verifier, redis: () => connectRedis(config.redisUrl), redisPrefix: config.redisPrefix });
} catch (error) {
  if (!isPortInUse(error)) throw error;
  console.error(`gateway: METRICS_PORT: ${portInUseMessage(error, [config.metricsPort])}`);
  process.exit(1);
}
try {
  app.listen({
    port: config.port,
    hostname: "0.0.0.0",
    // Elysia shares the port by default (SO_REUSEPORT): a second gateway would silently take half the requests.
    reusePort: false,
    // The body limit is the gateway's own (413 in JSON); Bun's would answer an empty 413 first.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
  });
} catch (error) {
  if (!isPortInUse(error)) throw error;
  console.error(`gateway: PORT: ${portInUseMessage(error, [config.port])}`);
  process.exit(1);
}
let grpc: PublicGrpcServer;
try {
  grpc = await startPublicGrpcServer({ port: config.grpcPort, core, logger, accessLogSample: accessLogShare, workloads: { verifier, acting: config.actingWorkloads }, tls });
} catch (error) {
  if (!isPortInUse(error)) throw error;
  console.error(`gateway: GRPC_PORT: ${portInUseMessage(error, [config.grpcPort])}`);
  process.exit(1);
}
logger.info("gateway listening", { port: app.server?.port, grpcPort: grpc.port, metricsPort: admin?.port });
collectGarbageWhenQuiet();

onShutdown(
  logger,
  async () => {
    // Open article watches keep HTTP/2 sessions alive: the listener is given a moment, not more.
    // The HTTP listener closes and lets the requests in flight finish.
    await Promise.all([app.stop(), settledWithin(grpc.stop(), 2000)]);
    await admin?.stop();
    await dependencies.stop();
    await flushTracing();
    redis.disconnect();
    subscriber.disconnect();
  },
  // /readyz answers 503 from SIGTERM on, while the gateway still serves for SHUTDOWN_DELAY_MS.
  () => (draining = true),
);
