// The gateway's gRPC listener (HTTP/2): the public API for internal teams (articles.api.v1:
// ArticleService, WorkflowService, PublishingService and WebhookEndpointService),
// with the standard health protocol and server reflection, so grpcurl, grpcui and any gRPC
// client can list, describe and call it without the .proto files. Each call names who acts: an
// API key, or a granted workload's identity token with the account and user (public-calls.ts).
import http2 from "node:http2";
import type { ConnectRouter } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as Serving } from "../../../proto/gen/grpc/health/v1/health_pb.ts";
import type { Logger } from "../../../services/kit/src/logger.ts";
import { answerRequestIds, callLog } from "../../../services/kit/src/call-log.ts";
import { traceServerInterceptor, tracingEnabled } from "../../../services/kit/src/tracing.ts";
import { addReflection } from "../../../services/kit/src/reflection.ts";
import { renewCertificates } from "../../../services/kit/src/server.ts";
import type { ListenerTls } from "../../../services/kit/src/tls.ts";
import { BOUNDED_COMPRESSIONS, listenerLimits, PUBLIC_DEADLINE_CAP_MS, withDeadlineCap } from "../../../services/kit/src/message-limits.ts";
import type { GatewayCore } from "../app.ts";
import { articleService } from "./article-service.ts";
import { publicCalls, type PublicWorkloads } from "./public-calls.ts";
import { publishingService } from "./publishing-service.ts";
import { workflowService } from "./workflow-service.ts";
import { webhookEndpointService } from "./webhook-endpoint-service.ts";

export interface PublicGrpcServer {
  port: number;
  stop(): Promise<void>;
}

/** Health as the protocol has it: "" and the served services answer; an unknown one is NOT_FOUND (Check) or SERVICE_UNKNOWN (Watch). */
function health(router: ConnectRouter, served: () => Set<string>) {
  const known = (service: string) => service === "" || served().has(service);
  router.service(Health, {
    check(req) {
      if (!known(req.service)) throw new ConnectError(`unknown service ${req.service}`, Code.NotFound);
      return { status: Serving.SERVING };
    },
    async *watch(req, ctx) {
      yield { status: known(req.service) ? Serving.SERVING : Serving.SERVICE_UNKNOWN };
      // The gateway serves while it runs: nothing changes until the client leaves.
      await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
    },
  });
}

export async function startPublicGrpcServer(opts: {
  port: number;
  core: GatewayCore;
  logger: Logger;
  /** ACCESS_LOG_SAMPLE: the share of successful calls given an access line (refusals always have one). */
  accessLogSample: number;
  workloads: PublicWorkloads;
  tls?: ListenerTls;
  host?: string;
}): Promise<PublicGrpcServer> {
  const served = new Set<string>();
  const routes = (router: ConnectRouter) => {
    const calls = publicCalls(opts.core.gate, opts.workloads, opts.logger);
    articleService(router, calls, opts.core.articles);
    workflowService(router, calls, opts.core.workflows);
    publishingService(router, calls, opts.core.publishing);
    webhookEndpointService(router, calls, opts.core.endpoints);
    health(router, () => served);
    addReflection(router);
    for (const h of router.handlers) served.add(h.service.typeName);
  };
  // Every call gets a request id (the caller's usable x-request-id, else a new one), answered in its
  // x-request-id header; then, as on the HTTP listener, its span when its trace is kept (continuing
  // the caller's traceparent) and an access line with the request id, the account and key id.
  const interceptors = [answerRequestIds(), ...(tracingEnabled() ? [traceServerInterceptor()] : []), callLog(opts.logger, opts.accessLogSample)];
  // Requests as large as the HTTP API takes (checked, inflated and parsed before the caller's key
  // is); answers as large as a page of 100 articles.
  const handler = withDeadlineCap(connectNodeAdapter({ routes, interceptors, ...listenerLimits(PUBLIC_DEADLINE_CAP_MS), acceptCompression: BOUNDED_COMPRESSIONS }), PUBLIC_DEADLINE_CAP_MS);
  const server = opts.tls ? http2.createSecureServer({ cert: opts.tls.cert, key: opts.tls.key }, handler) : http2.createServer(handler);
  const stopRenewals = opts.tls ? renewCertificates(opts.tls, server as http2.Http2SecureServer, opts.logger) : () => {};
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host ?? "0.0.0.0", () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : opts.port,
    stop: () => {
      stopRenewals();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
