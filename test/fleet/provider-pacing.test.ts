// Real providers, played by simulators of their own in this process: one limited to 600 requests a
// minute (OpenAI's 429s and x-ratelimit headers), one down for two minutes, one limited to 1,200 a
// minute shared by two runner replicas. On a private stack (its own Postgres and Redis), so the
// budgets, breakers and account shares in Redis are this file's alone.
//
// The outage starts first (in the file's setup, so each test about it stands on its own, in any
// order or alone) and lasts while the 1,000-article drain runs, so the two-minute wait costs the
// suite no time of its own.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startSimulator, type RunningSimulator } from "../../services/model-simulator/src/simulator.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { eventually } from "../harness/eventually.ts";
import { startPrivateStack, type PrivateStack } from "../harness/private-infra.ts";
import { metricOf, startRunnerReplica } from "../harness/runner-replicas.ts";
import { modelCatalogClient } from "../harness/service-clients.ts";
import type { TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { articleBody, createWorkflow, marker, waitForArticle } from "../api/generation-support.ts";
import { openEvents } from "../api/article-events-support.ts";
import { configureProvider, countIn, createArticles, providerState } from "../api/provider-support.ts";

const LIMITED_RPM = 600;
const DRAIN_ARTICLES = 1000;
const OUTAGE_MS = 120_000;
const OUTAGE_ARTICLES = 20;
const SHARED_RPM = 1200;
const SHARED_ARTICLES = 300;

let infra: PrivateStack;
let stack: TestStack;
let limited: RunningSimulator;
let flaky: RunningSimulator;
let shared: RunningSimulator;

beforeAll(async () => {
  [limited, flaky, shared] = await Promise.all([
    startSimulator({ port: 0, provider: { requestsPerMinute: LIMITED_RPM } }),
    startSimulator({ port: 0 }),
    startSimulator({ port: 0, provider: { requestsPerMinute: SHARED_RPM } }),
  ]);
  infra = await startPrivateStack({
    PROVIDER_LIMITED_BASE_URL: `${limited.url}/v1`,
    PROVIDER_FLAKY_BASE_URL: `${flaky.url}/v1`,
    PROVIDER_SHARED_BASE_URL: `${shared.url}/v1`,
    // Breakers probe a failing provider every few seconds, as in production.
    PROVIDER_BREAKER_COOLDOWN_MS: "2000",
  });
  stack = infra.stack;
  const catalog = modelCatalogClient(stack);
  // Dearer than sim-fast, so they never become the default; only `shared` has its limit configured:
  // the others' are learned from the provider.
  for (const id of ["limited:sim-fast", "flaky:sim-fast"]) await catalog.addModel({ model: { id, active: true, inputPricePerMillion: "1", outputPricePerMillion: "1" } });
  await catalog.addModel({ model: { id: "shared:sim-fast", active: true, inputPricePerMillion: "1", outputPricePerMillion: "1", requestsPerMinute: SHARED_RPM } });
  outage = await startOutage();
}, 120_000);

afterAll(async () => {
  await infra?.stop();
  await Promise.all([limited, flaky, shared].map((sim) => sim?.stop()));
}, 60_000);

/** The article's whole event log, replayed after it ended: the event names with their data. */
async function eventsOf(token: string, id: string): Promise<{ event: string; data: any }[]> {
  const res = await fetch(`${stack.baseUrl}/v1/articles/${id}/events`, { headers: { authorization: `Bearer ${token}`, "last-event-id": "0-0" } });
  const text = await res.text();
  return text
    .split("\n\n")
    .map((block) => ({ event: /^event: (.+)$/m.exec(block)?.[1], data: /^data: (.+)$/m.exec(block)?.[1] }))
    .filter((e): e is { event: string; data: string } => Boolean(e.event && e.data))
    .map((e) => ({ event: e.event, data: JSON.parse(e.data) }));
}

let outage: { tenant: Tenant; api: ApiClient; ids: string[]; endsAt: number };

/** The flaky provider goes down for two minutes, then an account creates its two-step articles on it. */
async function startOutage(): Promise<typeof outage> {
  const tenant = await createTenant(stack);
  const api = apiClient(stack.baseUrl, tenant.token);
  const type = marker("outage");
  await createWorkflow(api, tenant.projectId, type, [
    { step_name: "Outline", user: `[[sim:words=20]] outline ${type}` },
    { step_name: "Draft", user: `[[sim:words=40]] draft ${type} from {step_1_output}` },
  ]);
  await configureProvider(flaky, { outage: { status: 503, duration_ms: OUTAGE_MS } });
  const endsAt = Date.now() + OUTAGE_MS;
  const ids = await createArticles(api, OUTAGE_ARTICLES, articleBody(tenant.projectId, { article_type: type, model: "flaky:sim-fast" }), 10);
  return { tenant, api, ids, endsAt };
}

test("a provider down with no fallback holds its articles unchanged, their step kept, instead of failing them", async () => {
  const { tenant, api, ids } = outage;
  // Every article reaches its first step and says it waits for its provider, none failed.
  await eventually(() => countIn(api, tenant.projectId, "writing"), (n) => n === OUTAGE_ARTICLES, 30_000, "every outage article writing");
  for (const id of ids) {
    const events = await openEvents(stack.baseUrl, tenant.token, id, { lastEventId: "0-0", deadlineMs: 30_000 });
    await events.until((e) => e.event === "waiting" && e.data.reason === "provider_unavailable" && e.data.step === "Outline");
    events.close();
  }
  expect(await countIn(api, tenant.projectId, "failed")).toBe(0);
  for (const id of ids.slice(0, 3)) expect((await api.get(`/v1/articles/${id}`)).body.data).toMatchObject({ status: "writing", current_step: "Outline" });
  // The breaker holds the calls back: far fewer refused calls than articles times their tries.
  expect((await providerState(flaky)).counts.failed).toBeLessThan(OUTAGE_ARTICLES * 3);
}, 90_000);

test("1,000 articles over a provider limited to 600 requests a minute all complete at its pace, with under 5% refused; another account's article starts within seconds", async () => {
  const burst = await createTenant(stack);
  const burstApi = apiClient(stack.baseUrl, burst.token);
  const type = marker("drain");
  await createWorkflow(burstApi, burst.projectId, type, [{ step_name: "Write", user: `[[sim:words=30]] write ${type}` }]);
  const body = articleBody(burst.projectId, { article_type: type, model: "limited:sim-fast" });
  await createArticles(burstApi, DRAIN_ARTICLES, body, 50);

  // While the burst drains, a second account's single article goes ahead of it.
  await eventually(() => countIn(burstApi, burst.projectId, "completed"), (n) => n >= 50, 60_000, "the burst draining");
  const other = await createTenant(stack);
  const otherApi = apiClient(stack.baseUrl, other.token);
  await createWorkflow(otherApi, other.projectId, type, [{ step_name: "Write", user: `[[sim:words=30]] write ${type}` }]);
  const asked = Date.now();
  const single = (await otherApi.post("/v1/articles", articleBody(other.projectId, { article_type: type, model: "limited:sim-fast" }))).body.data;
  const done = await waitForArticle(otherApi, single.external_id, (a) => ["completed", "failed"].includes(a.status), 30_000);
  const tookMs = Date.now() - asked;
  expect(done.status).toBe("completed");
  expect(tookMs).toBeLessThan(10_000);
  const left = DRAIN_ARTICLES - (await countIn(burstApi, burst.projectId, "completed"));
  expect(left).toBeGreaterThan(300);

  await eventually(() => countIn(burstApi, burst.projectId, "completed"), (n) => n === DRAIN_ARTICLES, 240_000, "every burst article completed");
  expect(await countIn(burstApi, burst.projectId, "failed")).toBe(0);

  const { counts } = await providerState(limited);
  const calls = counts.admitted + counts.rate_limited;
  const idealMs = ((counts.admitted - LIMITED_RPM / 60) / (LIMITED_RPM / 60)) * 1000;
  const makespanMs = counts.last_admitted_at! - counts.first_admitted_at!;
  console.log(`limited provider: ${counts.admitted} answered, ${counts.rate_limited} refused (429), makespan ${(makespanMs / 1000).toFixed(1)} s against ${(idealMs / 1000).toFixed(1)} s at the limit; the other account's article took ${tookMs} ms`);
  expect(counts.admitted).toBeGreaterThanOrEqual(DRAIN_ARTICLES + 1);
  expect(counts.rate_limited / calls).toBeLessThan(0.05);
  expect(makespanMs).toBeLessThan(idealMs * 1.2);
}, 400_000);

test("after the two-minute outage every held article completes, each step billed once", async () => {
  const { api, tenant, ids, endsAt } = outage;
  await eventually(() => countIn(api, tenant.projectId, "completed"), (n) => n === OUTAGE_ARTICLES, Math.max(endsAt - Date.now(), 0) + 90_000, "every outage article completed");
  expect(await countIn(api, tenant.projectId, "failed")).toBe(0);
  for (const id of ids) {
    const article = (await api.get(`/v1/articles/${id}`)).body.data;
    const steps = (await api.get(`/v1/articles/${id}/steps`)).body.data;
    expect(steps.steps.map((s: any) => s.step_number)).toEqual([1, 2]);
    expect(steps.total_cost).toBe(article.cost);
  }
  // Each article said why it waited.
  const events = await eventsOf(tenant.token, ids[0]!);
  expect(events.some((e) => e.event === "waiting" && e.data.reason === "provider_unavailable" && e.data.step === "Outline")).toBe(true);
}, 300_000);

test("two runner replicas together stay inside one budget", async () => {
  const replica = await startRunnerReplica(stack);
  try {
    const tenant = await createTenant(stack);
    const api = apiClient(stack.baseUrl, tenant.token);
    const type = marker("shared");
    await createWorkflow(api, tenant.projectId, type, [{ step_name: "Write", user: `[[sim:words=30]] shared ${type}` }]);
    await createArticles(api, SHARED_ARTICLES, articleBody(tenant.projectId, { article_type: type, model: "shared:sim-fast" }), 50);
    await eventually(() => countIn(api, tenant.projectId, "completed"), (n) => n === SHARED_ARTICLES, 120_000, "every shared article completed");

    const { counts } = await providerState(shared);
    expect(counts.rate_limited).toBe(0);
    expect(counts.admitted).toBe(SHARED_ARTICLES);
    // Both replicas made calls on the budget.
    for (const metrics of [stack.metricsUrls.generationRunner!, replica.metricsUrl]) {
      expect(await metricOf(metrics, "provider_calls_total", { budget: "shared:sim-fast", outcome: "ok" })).toBeGreaterThan(0);
    }
  } finally {
    await replica.stop();
  }
}, 180_000);
