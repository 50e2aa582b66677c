// The gateway's operator port (METRICS_PORT, by default PORT + 1): Prometheus metrics on
// /metrics, and the BullMQ queue dashboard on /queues behind the service credential (Bearer
// SERVICE_TOKEN, or basic auth with it as the password). Kept off the public API port so that
// only the cluster network (a NetworkPolicy) reaches it.
import { timingSafeEqual } from "node:crypto";
import { fileURLToPath } from "node:url";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { Elysia } from "elysia";
import { Queue } from "bullmq";
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { ElysiaAdapter } from "@bull-board/elysia";
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

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
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

export async function startAdminServer(opts: { port: number; serviceToken: string; redis: IORedis; redisPrefix: string }): Promise<AdminServer> {
  const queues = Object.values(QUEUES).map((q) => new Queue(q.name, { connection: opts.redis, prefix: queuePrefix(opts.redisPrefix) }));
  const board = new ElysiaAdapter(DASHBOARD_PATH);
  createBullBoard({ queues: queues.map((q) => new BullMQAdapter(q)), serverAdapter: board, options: { uiBasePath: uiBasePath(), uiConfig: { boardTitle: "Article queues" } } });
  const dashboard = await board.registerPlugin();
  const app = new Elysia()
    // Before routing, so every page, script and API call of the dashboard is covered.
    .onRequest(({ request }) => {
      const path = new URL(request.url).pathname;
      if ((path === DASHBOARD_PATH || path.startsWith(DASHBOARD_PATH + "/")) && !hasServiceCredential(request.headers.get("authorization"), opts.serviceToken)) {
        return new Response("The queue dashboard needs the service credential.", { status: 401, headers: { "www-authenticate": 'Basic realm="queues"' } });
      }
    })
    .onError(({ code }) => (code === "NOT_FOUND" ? new Response("Not found", { status: 404 }) : undefined))
    .get("/metrics", async () => new Response(await registry.metrics(), { headers: { "content-type": registry.contentType } }))
    .use(dashboard)
    .listen({ port: opts.port, hostname: "0.0.0.0", reusePort: false });
  return {
    port: app.server!.port!,
    async stop() {
      await app.stop();
      await Promise.all(queues.map((q) => q.close()));
    },
  };
}
