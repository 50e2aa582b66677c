// The gateway's operator port (METRICS_PORT, by default PORT + 1): Prometheus metrics on
// /metrics, and the BullMQ queue dashboard on /queues for the operator only: the operator's
// identity token as `Bearer <token>`, or as the password of basic auth (a browser's login prompt).
// Kept off the public API port so that only the cluster network (a NetworkPolicy) reaches it.
import type { RedisConnection } from "../../../services/kit/src/redis.ts";
import { CALLERS } from "../../../services/kit/src/access-policy.ts";
import type { CallerVerifier } from "../../../services/kit/src/workload-identity.ts";
import { fileURLToPath } from "node:url";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { Elysia } from "elysia";
import { registry } from "../../../services/kit/src/metrics.ts";
import { openQueue, QUEUES, type QueueName } from "../../../services/kit/src/queues.ts";

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

/** Whether the request carries the operator's token, as a bearer token or basic auth's password. */
export async function isOperator(header: string | null, verifier: CallerVerifier): Promise<boolean> {
  let authorization = header;
  if (header?.startsWith("Basic ")) {
    const decoded = Buffer.from(header.slice(6), "base64").toString();
    authorization = `Bearer ${decoded.slice(decoded.indexOf(":") + 1)}`;
  }
  try {
    return (await verifier.callerOf(authorization)) === CALLERS.operator;
  } catch {
    return false;
  }
}

export interface AdminServer {
  port: number;
  stop(): Promise<void>;
}

/** The dashboard as a request handler: built on its first request, since most gateways never serve one. */
async function openDashboard(redis: RedisConnection, redisPrefix: string): Promise<{ handle(request: Request): Promise<Response>; close(): Promise<void> }> {
  const [{ createBullBoard }, { BullMQAdapter }, { ElysiaAdapter }] = await Promise.all([
    import("@bull-board/api"),
    import("@bull-board/api/bullMQAdapter"),
    import("@bull-board/elysia"),
  ]);
  // Opened as every process opens them, so the queues' settings stay as they are.
  const queues = (Object.keys(QUEUES) as QueueName[]).map((name) => openQueue(name, redis, redisPrefix));
  const board = new ElysiaAdapter(DASHBOARD_PATH);
  createBullBoard({ queues: queues.map((q) => new BullMQAdapter(q)), serverAdapter: board, options: { uiBasePath: uiBasePath(), uiConfig: { boardTitle: "Article queues" } } });
  const app = new Elysia().use(await board.registerPlugin());
  return {
    handle: (request) => app.handle(request),
    close: async () => void (await Promise.all(queues.map((q) => q.close()))),
  };
}

export async function startAdminServer(opts: { port: number; verifier: CallerVerifier; redis: () => RedisConnection; redisPrefix: string }): Promise<AdminServer> {
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
      if (!(await isOperator(request.headers.get("authorization"), opts.verifier))) {
        return new Response("The queue dashboard needs the operator's identity token.", { status: 401, headers: { "www-authenticate": 'Basic realm="queues"' } });
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
