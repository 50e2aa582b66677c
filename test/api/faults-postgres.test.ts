// Postgres faults under a running stack, on a private cluster (never the machine's): a restart
// while articles generate, backends terminated under load, and a 30-second outage. No process
// may exit; calls during an outage answer 503 in the plain error shape and health says
// NOT_SERVING; once Postgres answers again everything serves, every article finishes, nothing
// is half-written and the word ledger balances.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as Serving } from "../../proto/gen/grpc/health/v1/health_pb.ts";
import type { ServiceUrls } from "../../services/kit/src/config.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { createArticle } from "../harness/articles.ts";
import { eventually } from "../harness/eventually.ts";
import { startPrivateStack, type PrivateStack } from "../harness/private-infra.ts";
import type { TestStack } from "../harness/stack.ts";
import { createTenant } from "../harness/tenants.ts";
import { articleBody, createWorkflow, marker, waitForArticle, wordUsage } from "./generation-support.ts";

let infra: PrivateStack;
let stack: TestStack;

beforeAll(async () => {
  infra = await startPrivateStack();
  stack = infra.stack;
}, 90_000);

afterAll(async () => {
  await infra?.stop();
}, 60_000);

const DONE = ["completed", "published"];
const SERVICES = ["accountsBilling", "workflowCatalog", "articleStore", "generationRunner", "webhookDispatcher"] as const satisfies (keyof ServiceUrls)[];

async function newTenant() {
  const tenant = await createTenant(stack);
  return { tenant, api: apiClient(stack.baseUrl, tenant.token) };
}

/** A custom article type whose steps take a while, so generation is in flight when the fault hits. */
async function slowType(api: ApiClient, projectId: number, sleepMs: number): Promise<string> {
  const m = marker("fault");
  const type = marker("faulty");
  await createWorkflow(api, projectId, type, [
    { step_name: "Draft", user: `[[sim:sleep=${sleepMs}]][[sim:echo]]draft ${m}` },
    { step_name: "Polish", user: `[[sim:sleep=${sleepMs}]][[sim:echo]]final ${m} from {step_1_output}` },
  ]);
  return type;
}

/**
 * What each service's grpc.health.v1 check answers (UNKNOWN when it does not answer): for the
 * whole process (readiness) by default, or for the `liveness` service Kubernetes' liveness probe asks.
 */
async function healthOfServices(service = ""): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  await Promise.all(
    SERVICES.map(async (name) => {
      const health = createClient(Health, createGrpcTransport({ baseUrl: stack.grpcUrls[name], defaultTimeoutMs: 2000 }));
      out[name] = Serving[(await health.check({ service }).catch(() => ({ status: Serving.UNKNOWN }))).status];
    }),
  );
  return out;
}

const allServing = (health: Record<string, string>) => Object.values(health).every((s) => s === "SERVING");

/** Polls an article until it ends; a 503 (the fault's last moments) is asked again, anything else must be 200. */
async function finishedArticle(api: ApiClient, id: string, timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: any;
  while (Date.now() < deadline) {
    const res = await api.get(`/v1/articles/${id}`);
    if (res.status !== 503) {
      expect(res.status).toBe(200);
      last = res.body.data;
      if ([...DONE, "failed"].includes(last.status)) return last;
    }
    await Bun.sleep(200);
  }
  throw new Error(`article ${id} did not finish within ${timeoutMs} ms; last: ${JSON.stringify({ status: last?.status, current_step: last?.current_step })}`);
}

/** Every article of the project, through the public list. */
async function listed(api: ApiClient, projectId: number): Promise<any[]> {
  const articles: any[] = [];
  for (let page = 1; ; page++) {
    const res = await api.get(`/v1/articles?project_id=${projectId}&per_page=100&page=${page}`);
    expect(res.status).toBe(200);
    articles.push(...res.body.data);
    if (page >= res.body.meta.last_page) return articles;
  }
}

/**
 * The ledger balances: nothing still reserved, and the used words are exactly what the completed
 * articles settled. Balancing is owed, not instant: a creation answered 503 whose release failed
 * with the database releases again 2 s, then 4 s, … later (gateway), and a settlement that failed
 * is retried with its job; so the ledger is read until it balances, for up to 20 s.
 */
async function expectLedgerBalanced(accountId: number, articles: any[]) {
  const settled = articles.filter((a) => DONE.includes(a.status)).reduce((n, a) => n + a.actual_word_count, 0);
  const deadline = Date.now() + 20_000;
  let usage = await wordUsage(stack, accountId);
  while ((Number(usage.reservedWords) !== 0 || Number(usage.usedWords) !== settled) && Date.now() < deadline) {
    await Bun.sleep(250);
    usage = await wordUsage(stack, accountId);
  }
  expect(Number(usage.reservedWords)).toBe(0);
  expect(Number(usage.usedWords)).toBe(settled);
}

test("a Postgres restart while articles generate: every article completes and no process exits", async () => {
  const { tenant, api } = await newTenant();
  const type = await slowType(api, tenant.projectId, 1500);
  const created = await Promise.all(Array.from({ length: 8 }, () => createArticle(api, articleBody(tenant.projectId, { article_type: type }))));
  await waitForArticle(api, created[0].external_id, (a) => a.status === "writing", 20_000);

  await infra.postgres.restart();

  for (const article of created) {
    const done = await finishedArticle(api, article.external_id);
    expect(done.status).toBe("completed");
    expect(done.content).toStartWith("final ");
  }
  expect(infra.exited()).toEqual([]);
  await expectLedgerBalanced(tenant.accountId, await listed(api, tenant.projectId));
}, 120_000);

test("backends terminated under load: no process exits and every article completes", async () => {
  const { tenant, api } = await newTenant();
  const type = await slowType(api, tenant.projectId, 300);
  const created: any[] = [];
  let loading = true;
  // Creations and reads keep every service's pool busy (transactions included) while its
  // connections are cut: queries die mid-flight, and writes land on connections already closed.
  const load = Promise.all(
    Array.from({ length: 4 }, async () => {
      while (loading) {
        const res = await api.post("/v1/articles", articleBody(tenant.projectId, { article_type: type }));
        if (res.status === 201) created.push(res.body.data);
        else expect(res.status).toBe(503);
        const read = await api.get(`/v1/articles?project_id=${tenant.projectId}&per_page=20`);
        expect([200, 503]).toContain(read.status);
      }
    }),
  );
  let terminated = 0;
  try {
    for (let round = 0; round < 12; round++) {
      await Bun.sleep(400);
      terminated += await infra.postgres.terminateBackends("datname = 'articles'");
    }
  } finally {
    loading = false;
    await load;
  }
  expect(terminated).toBeGreaterThan(0);
  expect(infra.exited()).toEqual([]);

  expect(created.length).toBeGreaterThan(0);
  for (const article of created) {
    const done = await finishedArticle(api, article.external_id);
    expect(done.status).toBe("completed");
  }
  const all = await listed(api, tenant.projectId);
  expect(all.map((a) => a.external_id).sort()).toEqual(created.map((a) => a.external_id).sort());
  await expectLedgerBalanced(tenant.accountId, all);
  expect(infra.exited()).toEqual([]);
}, 120_000);

test("Postgres stopped for 15 s: 503 in the plain shape and NOT_SERVING meanwhile, then everything serves again", async () => {
  const { tenant, api } = await newTenant();
  const type = await slowType(api, tenant.projectId, 1000);
  const created: any[] = await Promise.all(Array.from({ length: 4 }, () => createArticle(api, articleBody(tenant.projectId, { article_type: type }))));
  await waitForArticle(api, created[0].external_id, (a) => a.status === "writing", 20_000);

  await infra.postgres.stop();
  const stoppedAt = Date.now();
  try {
    // Every service needs its Postgres: all report NOT_SERVING, and so does the gateway.
    await eventually(() => healthOfServices(), (h) => Object.values(h).every((s) => s === "NOT_SERVING"), 15_000, "every service to report NOT_SERVING");
    await eventually(() => fetch(`${stack.baseUrl}/healthz`).then((r) => r.status), (s) => s === 503, 15_000, "the gateway's /healthz to answer 503");
    // Liveness stays good: an orchestrator takes them out of rotation without restarting them.
    expect(allServing(await healthOfServices("liveness"))).toBe(true);
    expect((await fetch(`${stack.baseUrl}/livez`)).status).toBe(200);
    // The gateway stays ready for the load balancer: it answers the calls that need Postgres itself, in JSON.
    expect((await fetch(`${stack.baseUrl}/readyz`)).status).toBe(200);

    const refused = await api.post("/v1/articles", articleBody(tenant.projectId, { article_type: type }));
    expect(refused.status).toBe(503);
    expect(refused.body).toEqual({ message: expect.any(String) });
    const read = await api.get(`/v1/articles/${created[0].external_id}`);
    expect(read.status).toBe(503);
    expect(read.body).toEqual({ message: expect.any(String) });

    // Keep asking through the outage: each answer is 503 in the plain shape, and nothing it refused exists afterwards.
    while (Date.now() - stoppedAt < 15_000) {
      const res = await api.post("/v1/articles", articleBody(tenant.projectId, { article_type: type }));
      expect(res.status).toBe(503);
      expect(Object.keys(res.body)).toEqual(["message"]);
      await Bun.sleep(1000);
    }
    expect(infra.exited()).toEqual([]);
  } finally {
    await infra.postgres.start();
  }

  await eventually(() => healthOfServices(), allServing, 30_000, "every service to report SERVING again");
  await eventually(() => fetch(`${stack.baseUrl}/healthz`).then((r) => r.status), (s) => s === 200, 30_000, "the gateway's /healthz to answer 200 again");
  const after = await eventually(() => api.post("/v1/articles", articleBody(tenant.projectId, { article_type: type })), (r) => r.status !== 503, 30_000, "creation to answer again");
  expect(after.status).toBe(201);
  created.push(after.body.data);

  // An article waits out its own services' Postgres (PROVIDER_OUTAGE_LIMIT_MS, hours): those in
  // flight during the outage complete, and so does the one created after it.
  for (const article of created) {
    const done = await finishedArticle(api, article.external_id);
    expect({ id: article.external_id, status: done.status, failure_reason: done.failure_reason }).toEqual({ id: article.external_id, status: "completed", failure_reason: null });
    expect(done.content).toStartWith("final ");
  }
  // Nothing half-written: exactly the articles whose creation answered 201, and the ledger balances.
  const all = await listed(api, tenant.projectId);
  expect(all.map((a) => a.external_id).sort()).toEqual(created.map((a) => a.external_id).sort());
  await expectLedgerBalanced(tenant.accountId, all);
  expect(infra.exited()).toEqual([]);
}, 150_000);
