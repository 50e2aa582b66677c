// The gateway's gRPC listener (HTTP/2): the public API for internal teams (articles.api.v1:
// ArticleService and WorkflowService),
// with the standard health protocol and server reflection, so grpcurl, grpcui and any gRPC
// client can list, describe and call it without the .proto files. No service credential: each
// call carries an API key, checked by the same gates as /v1.
import http2 from "node:http2";
import type { ConnectRouter } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as Serving } from "../../../proto/gen/grpc/health/v1/health_pb.ts";
import type { Logger } from "../../../services/kit/src/logger.ts";
import { addReflection } from "../../../services/kit/src/reflection.ts";
import type { GatewayCore } from "../app.ts";
import { articleService } from "./article-service.ts";
import { publicCalls } from "./public-calls.ts";
import { workflowService } from "./workflow-service.ts";

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

export async function startPublicGrpcServer(opts: { port: number; core: GatewayCore; logger: Logger; host?: string }): Promise<PublicGrpcServer> {
  const served = new Set<string>();
  const routes = (router: ConnectRouter) => {
    const calls = publicCalls(opts.core.gate, opts.logger);
    articleService(router, calls, opts.core.articles);
    workflowService(router, calls, opts.core.workflows);
    health(router, () => served);
    addReflection(router);
    for (const h of router.handlers) served.add(h.service.typeName);
  };
  const server = http2.createServer(connectNodeAdapter({ routes }));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host ?? "0.0.0.0", () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : opts.port,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
