// A fleet of three runner replicas sharing one provider: whatever decides who calls it (the
// circuit breaker, the budgets, the fair shares between accounts) lives in Redis, so it must hold
// for replicas that have seen nothing themselves. Providers are simulators of this file's own, on
// a private stack (its own Postgres and Redis), so the breakers and budgets are this file's alone.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startSimulator, type RunningSimulator } from "../../services/model-simulator/src/simulator.ts";
import { FAILURES_TO_OPEN } from "../../services/generation-runner/src/domain/circuit-breaker.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { eventually } from "../harness/eventually.ts";
import { startPrivateStack, type PrivateStack } from "../harness/private-infra.ts";
import { metricOf, startRunnerReplicas, type RunnerReplica } from "../harness/runner-replicas.ts";
import { modelCatalogClient } from "../harness/service-clients.ts";
import type { TestStack } from "../harness/stack.ts";
import { createTenant } from "../harness/tenants.ts";
import { articleBody, createWorkflow, marker } from "./generation-support.ts";
import { configureProvider, countIn, providerState, resetProviderCounts } from "./provider-support.ts";

const FIRST_WAVE = 5;
const SECOND_WAVE = 30;

let infra: PrivateStack;
let stack: TestStack;
let flaky: RunningSimulator;
const replicas: RunnerReplica[] = [];

beforeAll(async () => {
  flaky = await startSimulator({ port: 0 });
  infra = await startPrivateStack({
    PROVIDER_FLAKY_BASE_URL: `${flaky.url}/v1`,
    // The production default: probes double from 5 s, bounded by the probe cadence.
    PROVIDER_BREAKER_COOLDOWN_MS: "5000",
  });
  stack = infra.stack;
  await modelCatalogClient(stack).addModel({ model: { id: "flaky:sim-fast", active: true, inputPricePerMillion: "1", outputPricePerMillion: "1" } });
}, 120_000);

afterAll(async () => {
  await Promise.all(replicas.map((replica) => replica.stop()));
  await infra?.stop();
  await flaky?.stop();
}, 120_000);

async function createArticles(api: ApiClient, n: number, body: Record<string, unknown>): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await api.post("/v1/articles", body);
    expect(res.status).toBe(201);
    ids.push(res.body.data.external_id);
  }
  return ids;
}

test("replicas that never saw a model fail send it nothing while another replica's breaker is open; its return is noticed within 10 s", async () => {
  const tenant = await createTenant(stack);
  const api = apiClient(stack.baseUrl, tenant.token);
  const type = marker("breaker");
  await createWorkflow(api, tenant.projectId, type, [{ step_name: "Write", user: `[[sim:words=20]] write ${type}` }]);
  const body = articleBody(tenant.projectId, { article_type: type, model: "flaky:sim-fast" });
  const own = stack.metricsUrls.generationRunner!;
  const outages = (url: string) => metricOf(url, "provider_calls_total", { budget: "flaky:sim-fast", outcome: "outage" });
  const failedProbes = (urls: string[]) => Promise.all(urls.map((url) => metricOf(url, "provider_calls_total", { budget: "flaky:sim-fast", outcome: "probe_failed" }))).then((n) => n.reduce((a, b) => a + b, 0));

  // The stack's own runner meets the outage and opens the breaker.
  await configureProvider(flaky, { outage: { status: 503, duration_ms: 600_000 } });
  await createArticles(api, FIRST_WAVE, body);
  await eventually(() => outages(own), (n) => n >= FAILURES_TO_OPEN, 30_000, "the breaker opened by the first replica");

  // Two replicas join during the outage (as an autoscaler adds them) and take articles of their own.
  replicas.push(...(await startRunnerReplicas(stack, 2)));
  const fleet = [own, ...replicas.map((r) => r.metricsUrl)];
  const probesBefore = await failedProbes(fleet);
  await resetProviderCounts(flaky);
  await createArticles(api, SECOND_WAVE, body);
  await eventually(() => countIn(api, tenant.projectId, "writing"), (n) => n === FIRST_WAVE + SECOND_WAVE, 30_000, "every article writing");
  // The new replicas hold articles waiting on the breaker, without ever having called the model.
  for (const replica of replicas) {
    await eventually(() => metricOf(replica.metricsUrl, "provider_calls_waited_total", { budget: "flaky:sim-fast", reason: "provider_unavailable" }), (n) => n > 0, 30_000, "a new replica's article waiting on the breaker");
  }
  await Bun.sleep(5000);
  for (const replica of replicas) expect(await outages(replica.metricsUrl)).toBe(0);
  // Only probes reached the provider: one at a time for the whole fleet, not one per article.
  const { failed } = await providerState(flaky).then((state) => state.counts);
  const probes = (await failedProbes(fleet)) - probesBefore;
  expect(failed).toBeLessThanOrEqual(probes + 1);
  expect(probes).toBeLessThanOrEqual(4);
  expect(await countIn(api, tenant.projectId, "failed")).toBe(0);

  // The provider answers again: a probe finds it within 10 s and every article completes, once.
  await configureProvider(flaky, { outage: null });
  const backAt = Date.now();
  await resetProviderCounts(flaky);
  await eventually(() => countIn(api, tenant.projectId, "completed"), (n) => n === FIRST_WAVE + SECOND_WAVE, 60_000, "every article completed");
  const counts = await providerState(flaky).then((state) => state.counts);
  const noticedMs = counts.first_admitted_at! - backAt;
  console.log(`the provider's return was noticed after ${noticedMs} ms; ${probes} probes failed during the 5 s watched`);
  expect(noticedMs).toBeLessThan(10_000);
  expect(await countIn(api, tenant.projectId, "failed")).toBe(0);
  // One call per article, the probe, and at most one read of the provider's limits per replica.
  expect(counts.admitted).toBeLessThanOrEqual(FIRST_WAVE + SECOND_WAVE + 1 + fleet.length);
}, 180_000);
