// The memory floor of the stack's parts: a process that loads and uses what one of the stack's
// processes is built on, and nothing of the application. PART=service: a Connect server on
// Bun.serve and on node:http2 (as every service listens), a Connect client, postgres.js through
// drizzle, ioredis, a BullMQ queue and prom-client, each used once; PART=gateway: Elysia with a
// route, a Connect client and ioredis. Run from a bundle, as the stack's processes are. Prints its
// RSS in MiB once it has settled. DATABASE_URL and REDIS_URL say where to connect. (The
// simulator's floor is bare-server.ts: a Bun.serve and nothing else.)
import { rssMiB } from "./measure.ts";

const part = process.env.PART ?? "service";
const databaseUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const closers: (() => unknown)[] = [];

async function connectClientOnce(baseUrl: string) {
  const { createClient } = await import("@connectrpc/connect");
  const { createFetchClient, validateReadWriteMaxBytes } = await import("@connectrpc/connect/protocol");
  const { createTransport } = await import("@connectrpc/connect/protocol-connect");
  const { Health } = await import("../../proto/gen/grpc/health/v1/health_pb.ts");
  const transport = createTransport({
    baseUrl,
    httpClient: createFetchClient(fetch),
    useBinaryFormat: true,
    interceptors: [],
    sendCompression: null,
    acceptCompression: [],
    ...validateReadWriteMaxBytes(undefined, undefined, undefined),
  });
  await createClient(Health, transport).check({});
}

async function redisOnce() {
  const { default: IORedis } = await import("ioredis");
  const redis = new IORedis(redisUrl, { maxRetriesPerRequest: null });
  await redis.ping();
  closers.push(() => redis.disconnect());
  return redis;
}

if (part === "service") {
  const { createConnectRouter } = await import("@connectrpc/connect");
  const { createFetchHandler } = await import("@connectrpc/connect/protocol");
  const { connectNodeAdapter } = await import("@connectrpc/connect-node");
  const { Health, HealthCheckResponse_ServingStatus } = await import("../../proto/gen/grpc/health/v1/health_pb.ts");
  const http2 = await import("node:http2");
  const router = createConnectRouter();
  router.service(Health, { check: () => ({ status: HealthCheckResponse_ServingStatus.SERVING }), watch: async function* () {} });
  const handlers = new Map(router.handlers.map((h) => [h.requestPath, createFetchHandler(h)]));
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => handlers.get(new URL(req.url).pathname)?.(req) ?? new Response(null, { status: 404 }) });
  const grpc = http2.createServer(connectNodeAdapter({ routes: (r) => r.service(Health, { check: () => ({ status: HealthCheckResponse_ServingStatus.SERVING }), watch: async function* () {} }) }));
  grpc.listen(0, "127.0.0.1");
  closers.push(() => server.stop(true), () => grpc.close());
  await connectClientOnce(`http://127.0.0.1:${server.port}`);
  const { default: postgres } = await import("postgres");
  const { drizzle } = await import("drizzle-orm/postgres-js");
  const { sql: raw } = await import("drizzle-orm");
  const sql = postgres(databaseUrl, { max: 2, onnotice: () => {} });
  await drizzle(sql).execute(raw`select 1`);
  closers.push(() => sql.end());
  const redis = await redisOnce();
  const { Queue } = await import("bullmq");
  const queue = new Queue(`bare-${process.pid}`, { connection: redis, prefix: `bare-process-${process.pid}` });
  await queue.getJobCounts();
  // Closing the queue writes its meta key again: everything under its prefix goes after it.
  closers.push(async () => {
    await queue.close();
    const keys = await redis.keys(`bare-process-${process.pid}:*`);
    if (keys.length > 0) await redis.del(...keys);
  });
  const client = await import("prom-client");
  client.collectDefaultMetrics();
  await client.register.metrics();
} else {
  const { Elysia } = await import("elysia");
  const app = new Elysia().get("/v1/articles/:id", ({ params }) => ({ data: { id: params.id } })).listen({ port: 0, hostname: "127.0.0.1" });
  closers.push(() => app.stop(true));
  await (await fetch(`http://127.0.0.1:${app.server!.port}/v1/articles/1`)).text();
  // The gateway reaches the services through Connect: against a health answer of its own here.
  const { createConnectRouter } = await import("@connectrpc/connect");
  const { createFetchHandler } = await import("@connectrpc/connect/protocol");
  const { Health, HealthCheckResponse_ServingStatus } = await import("../../proto/gen/grpc/health/v1/health_pb.ts");
  const router = createConnectRouter();
  router.service(Health, { check: () => ({ status: HealthCheckResponse_ServingStatus.SERVING }), watch: async function* () {} });
  const handler = createFetchHandler(router.handlers[0]!);
  const peer = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (req) => handler(req) });
  closers.push(() => peer.stop(true));
  await connectClientOnce(`http://127.0.0.1:${peer.port}`);
  await redisOnce();
}

await Bun.sleep(2000); // as the stack is read: after start-up work settles
console.log(JSON.stringify({ part, rssMiB: rssMiB(process.pid) }));
for (const close of closers.reverse()) await close();
process.exit(0);
