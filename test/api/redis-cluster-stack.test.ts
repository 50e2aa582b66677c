// The whole stack on a Redis Cluster (REDIS_URL=redis+cluster://…): three masters made from the
// machine's redis-server, a replica each, as managed Redis offers once one node is not enough.
// Everything that lives in Redis runs here as on one server: the queues (one hash tag), the
// gateway's rate limits and event streams, the runners' budgets, fair shares and breakers, and the
// webhooks; and a master's failover during a run loses nothing: no article, webhook or logged event. A private stack (its own Postgres).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startSimulator, type RunningSimulator } from "../../services/model-simulator/src/simulator.ts";
import { FAILURES_TO_OPEN } from "../../services/generation-runner/src/domain/circuit-breaker.ts";
import { queuePrefix } from "../../services/kit/src/redis.ts";
import { eventually } from "../harness/eventually.ts";
import { apiClient } from "../harness/http.ts";
import { startClusterStack, type ClusterStack } from "../harness/private-infra.ts";
import { metricOf } from "../harness/runner-replicas.ts";
import { modelCatalogClient } from "../harness/service-clients.ts";
import type { TestStack } from "../harness/stack.ts";
import { createTenant } from "../harness/tenants.ts";
import { startReceiver, type Receiver } from "../harness/webhook-receiver.ts";
import { openEvents } from "./article-events-support.ts";
import { articleBody, createWorkflow, marker, waitForArticle } from "./generation-support.ts";
import { configureProvider, createArticles, providerState } from "./provider-support.ts";

const LIMITED_RPM = 600;
const LIMITED_MODEL = "limited:sim-fast";
const FLAKY_MODEL = "flaky:sim-fast";

let infra: ClusterStack;
let stack: TestStack;
let limited: RunningSimulator;
let flaky: RunningSimulator;
let receiver: Receiver;

beforeAll(async () => {
  [limited, flaky] = await Promise.all([startSimulator({ port: 0, provider: { requestsPerMinute: LIMITED_RPM } }), startSimulator({ port: 0 })]);
  receiver = startReceiver();
  infra = await startClusterStack({ PROVIDER_LIMITED_BASE_URL: `${limited.url}/v1`, PROVIDER_FLAKY_BASE_URL: `${flaky.url}/v1` });
  stack = infra.stack;
  const catalog = modelCatalogClient(stack);
  await catalog.addModel({ model: { id: LIMITED_MODEL, active: true, inputPricePerMillion: "1", outputPricePerMillion: "1", requestsPerMinute: LIMITED_RPM } });
  await catalog.addModel({ model: { id: FLAKY_MODEL, active: true, inputPricePerMillion: "1", outputPricePerMillion: "1" } });
}, 180_000);

afterAll(async () => {
  receiver?.stop();
  await infra?.stop();
  await Promise.all([limited, flaky].map((sim) => sim?.stop()));
}, 120_000);

/** A tenant with a one-step workflow whose prompt is `prompt`, and the body of its articles. */
async function writer(prompt: string, extra: Record<string, unknown> = {}, perMinute?: number) {
  const tenant = await createTenant(stack, { perMinute });
  const api = apiClient(stack.baseUrl, tenant.token);
  const type = marker("cluster");
  await createWorkflow(api, tenant.projectId, type, [{ step_name: "Write", user: `${prompt} ${type}` }]);
  return { tenant, api, body: articleBody(tenant.projectId, { article_type: type, ...extra }) };
}

test("articles run end to end on a cluster, and the failover of the master holding the queues loses none and delivers each webhook once", async () => {
  const hook = receiver.hook();
  const { tenant, api, body } = await writer("[[sim:sleep=3000]][[sim:words=40]] write", { webhook_url: hook.url });
  const ids = await createArticles(api, 12, body, 4);
  // Watched from one gateway, several articles' logs (on different masters) are read side by side.
  const watched = await Promise.all(ids.slice(0, 4).map((id) => openEvents(stack.baseUrl, tenant.token, id, { deadlineMs: 90_000 })));
  expect(watched.map((events) => events.status)).toEqual([200, 200, 200, 200]);
  await eventually(() => api.get(`/v1/articles?project_id=${tenant.projectId}&status=writing&per_page=1`), (res) => res.body.meta.total > 0, 30_000, "articles being written");

  const { from, to } = await infra.cluster.failOver(`${queuePrefix(stack.redisPrefix, true)}:generation:wait`);
  expect(to).not.toBe(from);

  // An article with a webhook is published once its webhook is delivered. While the cluster is
  // between masters a read may answer 503 (retry with backoff), never anything else.
  const unavailable = { count: 0 };
  const finished = await Promise.all(ids.map((id) => waitForArticle(api, id, (a) => a.status === "published" || a.status === "failed", 90_000, unavailable)));
  if (unavailable.count > 0) console.log(`reads answered 503 during the failover: ${unavailable.count}`);
  expect(finished.map((a) => a.status)).toEqual(ids.map(() => "published"));
  // Each stream ends with the article's end: completed, or published when its webhook went first.
  for (const events of watched) {
    await events.done;
    // Said before the assertion, so a stream that never ended shows what it had received.
    if (!events.ended) console.log(`a watched stream did not end; its events: ${events.events.map((e) => e.event).join(", ")}`);
    expect(events.ended).toBe(true);
    expect(["completed", "published"]).toContain(events.events.at(-1)!.event);
  }
  // Every article's log holds its whole run, each event once: what was written while the cluster
  // changed masters (refused with MOVED or CLUSTERDOWN for seconds) was written again, not lost.
  // (Replayed from the start, the stream ends at the first final event, `completed`.)
  const RUN_EVENTS = ["step_started", "step_finished", "completed"];
  const logs = await Promise.all(ids.map((id) => openEvents(stack.baseUrl, tenant.token, id, { lastEventId: "0-0", deadlineMs: 30_000 })));
  const incomplete: string[] = [];
  for (const [i, log] of logs.entries()) {
    await log.done;
    const counted = RUN_EVENTS.map((name) => `${name}×${log.events.filter((e) => e.event === name).length}`);
    if (counted.some((c) => !c.endsWith("×1"))) incomplete.push(`${ids[i]}: ${counted.join(" ")}`);
  }
  expect(incomplete).toEqual([]);
  // Every article's webhook arrived, and once: duplicates are counted, not hidden.
  await hook.waitForRequests(ids.length, 30_000);
  const deliveries = new Map<string, number>();
  for (const request of hook.requests) deliveries.set(request.json.data.external_id, (deliveries.get(request.json.data.external_id) ?? 0) + 1);
  expect([...deliveries.keys()].sort()).toEqual([...ids].sort());
  expect([...deliveries.values()].filter((n) => n !== 1)).toEqual([]);
  expect(infra.exited()).toEqual([]);
}, 180_000);

test("the gateway's rate limits count on the cluster: the fourth request of a 3-a-minute plan is refused with 429", async () => {
  const { api, tenant } = await writer("[[sim:words=20]] write", {}, 3);
  for (let i = 0; i < 3; i++) expect((await api.get(`/v1/articles?project_id=${tenant.projectId}`)).status).toBe(200);
  const refused = await api.get(`/v1/articles?project_id=${tenant.projectId}`);
  expect(refused.status).toBe(429);
  expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
}, 60_000);

test("budgets and fair shares hold on the cluster: two accounts' articles through a 600-a-minute provider get no 429, both served", async () => {
  const [a, b] = await Promise.all([writer("[[sim:words=20]] write", { model: LIMITED_MODEL }), writer("[[sim:words=20]] write", { model: LIMITED_MODEL })]);
  const [idsA, idsB] = await Promise.all([createArticles(a.api, 30, a.body, 4), createArticles(b.api, 5, b.body, 1)]);
  const done = await Promise.all([...idsA.map((id) => waitForArticle(a.api, id, undefined, 90_000)), ...idsB.map((id) => waitForArticle(b.api, id, undefined, 90_000))]);
  expect(done.filter((article) => article.status !== "completed").map((article) => article.status)).toEqual([]);
  const provider = await providerState(limited);
  expect(provider.counts.rate_limited).toBe(0);
  expect(provider.counts.admitted).toBeGreaterThanOrEqual(35);
}, 150_000);

test("the breaker opens and closes on the cluster: an outage opens it, and once the provider answers the waiting article completes", async () => {
  const { api, body } = await writer("[[sim:words=20]] write", { model: FLAKY_MODEL });
  const calls = (outcome: string) => metricOf(stack.metricsUrls.generationRunner!, "provider_calls_total", { budget: FLAKY_MODEL, outcome });
  await configureProvider(flaky, { outage: { status: 503, duration_ms: 600_000 } });
  const [id] = await createArticles(api, 1, body);
  await eventually(() => calls("outage"), (n) => n >= FAILURES_TO_OPEN, 30_000, "the breaker opened");
  // Open, the breaker lets through probes only: a failed probe is counted as one.
  await eventually(() => calls("probe_failed"), (n) => n >= 1, 30_000, "a probe of the open breaker");
  expect(await calls("outage")).toBe(FAILURES_TO_OPEN);
  await configureProvider(flaky, { outage: null });
  const article = await waitForArticle(api, id!, undefined, 60_000);
  expect(article.status).toBe("completed");
}, 120_000);
