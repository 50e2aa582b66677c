// The gRPC server every service runs: Connect's node adapter on node:http2 (serving gRPC,
// gRPC-Web and Connect), the standard grpc.health.v1 service, the internal credential check,
// domain-error mapping, and a graceful drain on SIGTERM.
import http2 from "node:http2";
import { timingSafeEqual } from "node:crypto";
import { Code, ConnectError, type ConnectRouter, type Interceptor } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as Serving } from "../../../proto/gen/grpc/health/v1/health_pb.ts";
import { DomainError, toConnectError } from "./errors.ts";
import type { Logger } from "./logger.ts";

export interface ServiceServerOptions {
  name: string;
  port: number;
  host?: string;
  serviceToken: string;
  logger: Logger;
  routes: (router: ConnectRouter) => void;
}

export interface ServiceServer {
  port: number;
  setServing(serving: boolean): void;
  /** Stops taking calls, lets in-flight calls finish (up to graceMs), then closes. */
  drain(graceMs?: number): Promise<void>;
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Every call but health needs `authorization: Bearer <SERVICE_TOKEN>`. */
function requireServiceToken(token: string): Interceptor {
  return (next) => async (req) => {
    if (req.service.typeName !== Health.typeName) {
      const header = req.header.get("authorization") ?? "";
      const given = header.startsWith("Bearer ") ? header.slice(7) : "";
      if (!sameSecret(given, token)) throw new ConnectError("missing or invalid service credential", Code.Unauthenticated);
    }
    return next(req);
  };
}

/** Domain errors become Connect codes; anything unexpected is logged and answered INTERNAL. */
function mapDomainErrors(logger: Logger): Interceptor {
  return (next) => async (req) => {
    try {
      return await next(req);
    } catch (error) {
      if (error instanceof DomainError) throw toConnectError(error);
      if (error instanceof ConnectError) throw error;
      logger.error("unexpected error", { method: req.method.name, error: (error as Error).stack ?? String(error) });
      throw new ConnectError("internal error", Code.Internal);
    }
  };
}

export async function startServiceServer(opts: ServiceServerOptions): Promise<ServiceServer> {
  let status = Serving.SERVING;
  const inFlight = new Set<Promise<unknown>>();
  const trackCalls: Interceptor = (next) => (req) => {
    const call = next(req);
    inFlight.add(call);
    call.finally(() => inFlight.delete(call)).catch(() => {});
    return call;
  };

  const handler = connectNodeAdapter({
    interceptors: [trackCalls, requireServiceToken(opts.serviceToken), mapDomainErrors(opts.logger)],
    routes: (router) => {
      router.service(Health, {
        check: () => ({ status }),
        async *watch(_req, ctx) {
          yield { status };
          await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
        },
      });
      opts.routes(router);
    },
  });

  const server = http2.createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host ?? "0.0.0.0", () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : opts.port;
  opts.logger.info("serving gRPC", { port });

  return {
    port,
    setServing: (serving) => {
      status = serving ? Serving.SERVING : Serving.NOT_SERVING;
    },
    async drain(graceMs = 10_000) {
      status = Serving.NOT_SERVING;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      await Promise.race([Promise.allSettled([...inFlight]), Bun.sleep(graceMs)]);
      await Promise.race([closed, Bun.sleep(500)]);
    },
  };
}

/** Runs `stop` once on SIGTERM or SIGINT, then exits: the common shutdown of every process. */
export function onShutdown(logger: Logger, stop: () => Promise<void>): void {
  let stopping = false;
  const handle = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info("draining", { signal });
    stop()
      .catch((error) => logger.error("error while draining", { error }))
      .finally(() => process.exit(0));
  };
  process.on("SIGTERM", () => handle("SIGTERM"));
  process.on("SIGINT", () => handle("SIGINT"));
}
