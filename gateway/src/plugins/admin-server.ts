// The gateway's operator port (METRICS_PORT, by default PORT + 1): Prometheus metrics on
// /metrics, and the BullMQ queue dashboard on /queues behind the service credential (Bearer
// SERVICE_TOKEN, or basic auth with it as the password). Kept off the public API port so that
// only the cluster network (a NetworkPolicy) reaches it.
import { sameSecret } from "../../../services/kit/src/same-secret.ts";
import { fileURLToPath } from "node:url";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { Elysia } from "elysia";
import { Queue } from "bullmq";
import type IORedis from "ioredis";
import { registry } from "../../../services/kit/src/metrics.ts";
import { QUEUES } from "../../../services/kit/src/queues.ts";
import { queuePrefix } from "../../../services/kit/src/redis.ts";

export const DASHBOARD_PATH = "/queues";
// The dashboard's page and scripts: the nearest node_modules above this module or its bundle
// (gateway/src/plugins when run from source, gateway/src when bundled).
function uiBasePath(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules/@bull-board/ui");
    if (existsSync(candidate)) return candidate;
    if (dirname(dir) === dir) throw new Error("@bull-board/ui is not installed");
  }
}

/** Bearer <token>, or basic auth whose password is the token (a browser's login prompt). */
export function hasServiceCredential(header: string | null, token: string): boolean {
  if (!header) return false;
  if (header.startsWith("Bearer ")) return sameSecret(header.slice(7), token);
  if (header.startsWith("Basic ")) {
    const decoded = Buffer.from(header.slice(6), "base64").toString();
    return sameSecret(decoded.slice(decoded.indexOf(":") + 1), token);
  }
  return false;
}

export interface AdminServer {
  port: number;
  stop(): Promise<void>;
}

/** The dashboard as a request handler: built on its first request, since most gateways never serve one. */
async function openDashboard(redis: IORedis, redisPrefix: string): Promise<{ handle(request: Request): Promise<Response>; close(): Promise<void> }> {
  const [{ createBullBoard }, { BullMQAdapter }, { ElysiaAdapter }] = await Promise.all([
    import("@bull-board/api"),
    import("@bull-board/api/bullMQAdapter"),
    import("@bull-board/elysia"),
  ]);
  const queues = Object.values(QUEUES).map((q) => new Queue(q.name, { connection: redis, prefix: queuePrefix(redisPrefix) }));
  const board = new ElysiaAdapter(DASHBOARD_PATH);
  createBullBoard({ queues: queues.map((q) => new BullMQAdapter(q)), serverAdapter: board, options: { uiBasePath: uiBasePath(), uiConfig: { boardTitle: "Article queues" } } });
  const app = new Elysia().use(await board.registerPlugin());
  return {
    handle: (request) => app.handle(request),
    close: async () => void (await Promise.all(queues.map((q) => q.close()))),
  };
}

export async function startAdminServer(opts: { port: number; serviceToken: string; redis: () => IORedis; redisPrefix: string }): Promise<AdminServer> {
  let dashboard: ReturnType<typeof openDashboard> | undefined;
  const server = Bun.serve({
    port: opts.port,
    hostname: "0.0.0.0",
    reusePort: false,
    async fetch(request) {
      const path = new URL(request.url).pathname;
      if (path === "/metrics") return new Response(await registry.metrics(), { headers: { "content-type": registry.contentType } });
      if (path !== DASHBOARD_PATH && !path.startsWith(DASHBOARD_PATH + "/")) return new Response("Not found", { status: 404 });
      // Every page, script and API call of the dashboard needs the credential.
      if (!hasServiceCredential(request.headers.get("authorization"), opts.serviceToken)) {
        return new Response("The queue dashboard needs the service credential.", { status: 401, headers: { "www-authenticate": 'Basic realm="queues"' } });
      }
      dashboard ??= openDashboard(opts.redis(), opts.redisPrefix);
      const response = await (await dashboard).handle(request);
      return response.status === 404 ? new Response("Not found", { status: 404 }) : response;
    },
  });
  return {
    port: server.port!,
    async stop() {
      await server.stop();
      if (dashboard) await (await dashboard).close();
    },
  };
}
