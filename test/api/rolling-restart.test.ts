// A rolling restart of the gateway under load loses no request. Two gateway replicas sit behind a
// small load balancer that routes only to replicas whose /readyz answers 200 (checked every
// 100 ms, as Kubernetes' endpoints follow readiness); each replica is replaced in turn (a new one
// started and taken into rotation, the old one sent SIGTERM) while clients keep reading and
// creating articles. A replica answers /readyz 503 until its Redis connection is up and again from
// SIGTERM on, keeps serving for SHUTDOWN_DELAY_MS, then closes its listener and finishes what is
// in flight. (Found by this test: a fresh replica said ready before it could count a request
// against its rate limit, and answered its first requests 503.)
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { bundleProcess } from "../../deploy/local/process-bundles.ts";
import { RUNTIME_START_ENV } from "../../deploy/local/stack.ts";
import { createArticle } from "../harness/articles.ts";
import { eventually } from "../harness/eventually.ts";
import { apiClient } from "../harness/http.ts";
import { freePort } from "../harness/ports.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { articleBody } from "./generation-support.ts";

const SHUTDOWN_DELAY_MS = 1500;
const READINESS_PERIOD_MS = 100;

interface Replica {
  url: string;
  process: Subprocess;
}

let stack: TestStack;
let tenant: Tenant;
let bundle: string;
const ready = new Set<string>();
let balancer: ReturnType<typeof Bun.serve>;
let readiness: ReturnType<typeof setInterval>;
const replicas: Replica[] = [];

async function startReplica(): Promise<Replica> {
  const [port, grpcPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const child = Bun.spawn([process.execPath, bundle], {
    env: {
      ...RUNTIME_START_ENV,
      ...stack.env,
      IDENTITY_TOKEN_FILE: await stack.identity.tokenFile("gateway"),
      PORT: String(port),
      GRPC_PORT: String(grpcPort),
      METRICS_PORT: String(metricsPort),
      SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
    },
    stdout: "ignore",
    stderr: "inherit",
  });
  const replica = { url: `http://127.0.0.1:${port}`, process: child };
  replicas.push(replica);
  await eventually(() => fetch(`${replica.url}/readyz`).then((r) => r.status, () => 0), (s) => s === 200, 30_000, "the new replica ready");
  return replica;
}

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack, { perMinute: 1_000_000, perHour: 10_000_000, perDay: 100_000_000, monthlyWords: 100_000_000 });
  bundle = await bundleProcess(new URL("../../gateway/src/main.ts", import.meta.url).pathname);
  // The load balancer: round robin over the replicas that answered their last readiness check.
  let next = 0;
  balancer = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const targets = [...ready];
      if (targets.length === 0) return new Response("no ready replica", { status: 503 });
      const target = targets[next++ % targets.length]!;
      const url = new URL(request.url);
      const answer = await fetch(target + url.pathname + url.search, { method: request.method, headers: request.headers, body: request.body ? await request.arrayBuffer() : undefined });
      return new Response(await answer.arrayBuffer(), { status: answer.status, headers: answer.headers });
    },
  });
  readiness = setInterval(() => {
    for (const { url } of replicas) {
      fetch(`${url}/readyz`, { signal: AbortSignal.timeout(READINESS_PERIOD_MS * 5) }).then(
        (r) => (r.status === 200 ? ready.add(url) : ready.delete(url)),
        () => ready.delete(url),
      );
    }
  }, READINESS_PERIOD_MS);
}, 120_000);

afterAll(async () => {
  clearInterval(readiness);
  balancer?.stop(true);
  for (const { process: child } of replicas) if (child.exitCode === null) child.kill("SIGKILL");
});

test("replacing each gateway replica in turn under load fails no request", async () => {
  await startReplica();
  await startReplica();
  await eventually(async () => ready.size, (n) => n === 2, 5_000, "both replicas in rotation");
  const api = apiClient(`http://127.0.0.1:${balancer.port}`, tenant.token);
  const article = await createArticle(api, articleBody(tenant.projectId, { title: "Rolling restarts" }));

  // Clients: reads of an article and creations, through the balancer, until told to stop.
  const outcomes: { status: number; via: string }[] = [];
  let running = true;
  const client = async (n: number) => {
    for (let i = 0; running; i++) {
      const creating = (i + n) % 10 === 0;
      try {
        const res = creating ? await api.post("/v1/articles", articleBody(tenant.projectId, { title: `Rolling restart ${n}-${i}` })) : await api.get(`/v1/articles/${article.id}`);
        outcomes.push({ status: res.status, via: `${creating ? "POST /v1/articles" : "GET /v1/articles/{id}"}${res.status >= 300 ? ` ${JSON.stringify(res.body)}` : ""}` });
      } catch (error) {
        outcomes.push({ status: 0, via: String(error) });
      }
    }
  };
  const clients = Array.from({ length: 8 }, (_, n) => client(n));

  /** Waits until the clients have had `n` more answers (the load runs through what comes next). */
  const answered = (n: number, what: string) => {
    const from = outcomes.length;
    return eventually(async () => outcomes.length, (count) => count >= from + n, 10_000, `${n} more answers ${what}`);
  };

  // The rolling update: a new replica in, an old one out, twice, each under load.
  for (const old of replicas.slice(0, 2)) {
    await answered(20, "before a replica is replaced");
    const fresh = await startReplica();
    await eventually(async () => ready.has(fresh.url), Boolean, 5_000, "the new replica in rotation");
    old.process.kill("SIGTERM");
    expect(await old.process.exited).toBe(0);
  }
  // Load on the new replicas alone, up to the count the test asks for.
  await answered(Math.max(50, 201 - outcomes.length), "from the new replicas");
  running = false;
  await Promise.all(clients);

  const failed = outcomes.filter((o) => o.status !== 200 && o.status !== 201);
  expect(failed).toEqual([]);
  expect(outcomes.length).toBeGreaterThan(200);
  expect(outcomes.some((o) => o.via === "POST /v1/articles")).toBe(true);
}, 120_000);
