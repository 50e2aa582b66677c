// Redis lost under a running stack, on a private Redis (never the machine's): it stops while
// articles generate and comes back empty, as after a failover to a replica that had nothing.
// No process may exit; while Redis is away the gateway answers 503 in the plain error shape and
// the processes that need Redis report NOT_SERVING; once it is back every article still
// finishes, also those whose queued jobs were lost, and its completion webhook arrives. Delivery
// is at least once (spec 6: a retried delivery repeats the same article, keyed by
// data.external_id; docs/chaos-run.md): a delivery the receiver took while Redis was away, whose
// record could not be written, is sent again, so that is the only repeat the test allows.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as Serving } from "../../proto/gen/grpc/health/v1/health_pb.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { createArticle } from "../harness/articles.ts";
import { eventually } from "../harness/eventually.ts";
import { startPrivateStack, type PrivateStack } from "../harness/private-infra.ts";
import type { TestStack } from "../harness/stack.ts";
import { createTenant } from "../harness/tenants.ts";
import { articleBody, createWorkflow, marker, waitForArticle, webhookReceiver, wordUsage } from "./generation-support.ts";

let infra: PrivateStack;
let stack: TestStack;

beforeAll(async () => {
  // Two articles at a time, so most wait in the queue when Redis is lost: their jobs go with it,
  // and only article-store's reconciler can hand those articles out again.
  infra = await startPrivateStack({ RUNNER_CONCURRENCY: "2" });
  stack = infra.stack;
}, 90_000);

afterAll(async () => {
  await infra?.stop();
}, 60_000);

const healthOf = (name: keyof TestStack["grpcUrls"]) =>
  createClient(Health, createGrpcTransport({ baseUrl: stack.grpcUrls[name], defaultTimeoutMs: 2000 }))
    .check({})
    .then((r) => Serving[r.status], () => "UNKNOWN");

/** Polls an article until it is published; a 503 (Redis still coming back) is asked again, anything else must be 200. */
async function publishedArticle(api: ApiClient, id: string, timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: any;
  while (Date.now() < deadline) {
    const res = await api.get(`/v1/articles/${id}`);
    if (res.status !== 503) {
      expect(res.status).toBe(200);
      last = res.body.data;
      if (["published", "failed"].includes(last.status)) return last;
    }
    await Bun.sleep(250);
  }
  throw new Error(`article ${id} was not published within ${timeoutMs} ms; last: ${JSON.stringify({ status: last?.status, current_step: last?.current_step })}`);
}

test("Redis lost and back empty while articles generate: 503 and NOT_SERVING meanwhile, then every article is published", async () => {
  const tenant = await createTenant(stack);
  const api = apiClient(stack.baseUrl, tenant.token);
  const hook = webhookReceiver();
  try {
    const m = marker("redis");
    const type = marker("redisy");
    await createWorkflow(api, tenant.projectId, type, [
      { step_name: "Draft", user: `[[sim:sleep=1500]][[sim:echo]]draft ${m}` },
      { step_name: "Polish", user: `[[sim:sleep=1500]][[sim:echo]]final ${m} from {step_1_output}` },
    ]);
    const created = await Promise.all(
      Array.from({ length: 8 }, () => createArticle(api, articleBody(tenant.projectId, { article_type: type, webhook_url: hook.url }))),
    );
    await waitForArticle(api, created[0].external_id, (a) => a.status === "writing", 20_000);

    // A health watcher of article-store hears each change as it happens.
    const watching = new AbortController();
    const heard: string[] = [];
    const watcher = (async () => {
      const health = createClient(Health, createGrpcTransport({ baseUrl: stack.grpcUrls.articleStore }));
      for await (const { status } of health.watch({}, { signal: watching.signal })) heard.push(Serving[status]);
    })().catch(() => {});
    await eventually(async () => heard.length, (n) => n > 0, 10_000, "the first health status");

    await infra.redis.stop();
    try {
      // The gateway counts rate limits in Redis: it refuses rather than waits, in the plain shape.
      const refused = await eventually(() => api.post("/v1/articles", articleBody(tenant.projectId, { article_type: type })), (r) => r.status === 503, 10_000, "creation to answer 503");
      expect(refused.body).toEqual({ message: expect.any(String) });
      await eventually(() => fetch(`${stack.baseUrl}/healthz`).then((r) => r.status), (s) => s === 503, 10_000, "the gateway's /healthz to answer 503");
      // The processes whose work lives in Redis stop taking calls; the others keep serving.
      const needRedis = ["articleStore", "generationRunner", "webhookDispatcher"] as const;
      await eventually(() => Promise.all(needRedis.map(healthOf)), (s) => s.every((x) => x === "NOT_SERVING"), 10_000, "article-store, generation-runner and webhook-dispatcher to report NOT_SERVING");
      expect(await healthOf("accountsBilling")).toBe("SERVING");
      expect(await healthOf("workflowCatalog")).toBe("SERVING");
      await Bun.sleep(3000);
      expect(infra.exited()).toEqual([]);
    } finally {
      // Back with nothing: every queued and running job is gone.
      await infra.redis.start();
    }

    await eventually(() => fetch(`${stack.baseUrl}/healthz`).then((r) => r.status), (s) => s === 200, 30_000, "the gateway's /healthz to answer 200 again");
    for (const name of ["articleStore", "generationRunner", "webhookDispatcher"] as const) {
      await eventually(() => healthOf(name), (s) => s === "SERVING", 30_000, `${name} to report SERVING again`);
    }
    // From here on nothing is cut short by the fault.
    const servingAgainAt = Date.now();
    await eventually(async () => heard.at(-1), (s) => s === "SERVING", 10_000, "the watcher to hear SERVING again");
    watching.abort();
    await watcher;
    expect(heard).toEqual(["SERVING", "NOT_SERVING", "SERVING"]);
    const after = await eventually(() => api.post("/v1/articles", articleBody(tenant.projectId, { article_type: type, webhook_url: hook.url })), (r) => r.status !== 503, 30_000, "creation to answer again");
    expect(after.status).toBe(201);
    created.push(after.body.data);

    for (const article of created) {
      const done = await publishedArticle(api, article.external_id, 90_000);
      expect(done.status).toBe("published");
      expect(done.content).toStartWith(`final ${m}`);
    }
    // Every article's completion webhook arrived, and only for these articles.
    const copies = new Map<string, { body: any; at: number }[]>(created.map((a) => [a.external_id, []]));
    for (const r of hook.received) {
      const id = r.body?.data?.external_id;
      expect(copies.has(id), `a webhook for ${id}, not one of this test's articles`).toBe(true);
      copies.get(id)!.push(r);
    }
    for (const [id, received] of copies) {
      const first = received[0];
      expect(received.length, `the webhook of ${id} never arrived`).toBeGreaterThanOrEqual(1);
      // A repeat is the same message sent again, at most once, and only for a delivery the fault
      // interrupted: one that reached the receiver before every process served again.
      const repeats = received.length - 1;
      expect(repeats, `the webhook of ${id} arrived ${received.length} times`).toBeLessThanOrEqual(1);
      if (repeats > 0) {
        expect(first!.at, `the webhook of ${id} was repeated though its first copy arrived after the fault (at ${first!.at}, serving again at ${servingAgainAt})`).toBeLessThan(servingAgainAt);
        for (const again of received.slice(1)) expect(again.body).toEqual(first!.body);
      }
    }
    // The article created after the fault was never touched by it: its webhook arrived exactly once.
    expect(copies.get(after.body.data.external_id)!.length).toBe(1);
    const usage = await wordUsage(stack, tenant.accountId);
    expect(Number(usage.reservedWords)).toBe(0);
    expect(infra.exited()).toEqual([]);
  } finally {
    hook.stop();
  }
}, 180_000);
