// Operability: every process's Prometheus metrics after real traffic, the queue dashboard behind
// the service credential, and one trace from the gateway through article-store and the runner
// (a second stack exporting to a small OTLP/HTTP receiver started here).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { articleBody } from "../harness/articles.ts";
import { eventually } from "../harness/eventually.ts";
import { TEST_STACK_ENV, dropTestData, useStack, type TestStack } from "../harness/stack.ts";
import { startReceiver, type Receiver } from "../harness/webhook-receiver.ts";
import { createQuickArticle, publicArticle, webhookTenant, type WebhookTenant } from "./webhooks-fixtures.ts";
import { startStack, type Stack } from "../../deploy/local/stack.ts";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { ArticleService } from "../../proto/gen/articles/api/v1/articles_pb.ts";

let stack: TestStack;
let tenant: WebhookTenant;
let receiver: Receiver;

beforeAll(async () => {
  stack = await useStack();
  tenant = await webhookTenant(stack);
  receiver = startReceiver();
});
afterAll(() => receiver?.stop());

async function scrape(url: string | undefined): Promise<string> {
  expect(url).toBeDefined();
  const res = await fetch(`${url}/metrics`);
  expect(res.status).toBe(200);
  return res.text();
}

/** The sum of a metric's samples whose labels include every given label="value". */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(name + "{") && !line.startsWith(name + " ")) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}

describe("metrics", () => {
  test("every process serves its metrics on a port of its own, stated in the stack's environment", async () => {
    for (const name of ["gateway", "accountsBilling", "workflowCatalog", "articleStore", "generationRunner", "webhookDispatcher"] as const) {
      const text = await scrape(stack.metricsUrls[name]);
      expect(text).toContain("process_cpu_user_seconds_total");
      expect(text).toContain("nodejs_heap_size_used_bytes");
      // The per-space heap gauges walk the whole heap under Bun on every scrape: left out.
      expect(text).not.toContain("nodejs_heap_space_size");
    }
    expect(stack.env.GATEWAY_METRICS_PORT).toBe(new URL(stack.metricsUrls.gateway!).port);
    expect(stack.env.ARTICLE_STORE_METRICS_PORT).toBe(new URL(stack.metricsUrls.articleStore!).port);
  });

  test("traffic shows up: requests per route, calls per method, queues, model tokens and webhook attempts", async () => {
    // Every counter is compared with a scrape taken before this test's own traffic: earlier files'
    // traffic on the same stack must not be what satisfies it.
    const before = {
      gateway: await scrape(stack.metricsUrls.gateway),
      store: await scrape(stack.metricsUrls.articleStore),
      runner: await scrape(stack.metricsUrls.generationRunner),
      dispatcher: await scrape(stack.metricsUrls.webhookDispatcher),
      accounts: await scrape(stack.metricsUrls.accountsBilling),
    };
    /** How much a metric's samples (with these labels) grew since the scrape before. */
    const grew = (was: string, now: string, name: string, labels: Record<string, string> = {}) => sample(now, name, labels) - sample(was, name, labels);

    const hook = receiver.hook();
    const created = await createQuickArticle(tenant, { webhook_url: hook.url });
    await hook.waitForRequests(1);
    await publicArticle(tenant, created.id);

    const gateway = await scrape(stack.metricsUrls.gateway);
    const created201 = { route: "/v1/articles", method: "POST", status: "201" };
    expect(grew(before.gateway, gateway, "http_requests_total", created201)).toBe(1);
    expect(grew(before.gateway, gateway, "http_requests_total", { route: "/v1/articles/:id", method: "GET", status: "200" })).toBeGreaterThanOrEqual(1);
    expect(grew(before.gateway, gateway, "http_request_duration_seconds_count", { route: "/v1/articles", method: "POST" })).toBeGreaterThanOrEqual(1);
    // Route templates only: no article id ever becomes a label.
    expect(gateway).not.toMatch(/route="[^"]*\/\d+["/]/);

    const store = await scrape(stack.metricsUrls.articleStore);
    expect(grew(before.store, store, "rpc_server_requests_total", { rpc_method: "CreateArticle", code: "ok" })).toBeGreaterThanOrEqual(1);
    expect(grew(before.store, store, "rpc_server_duration_seconds_count", { rpc_method: "CreateArticle" })).toBeGreaterThanOrEqual(1);

    // The runner counts its job as processed once the job ends, which may follow the webhook.
    const runner = await eventually(
      () => scrape(stack.metricsUrls.generationRunner),
      (text) => grew(before.runner, text, "bullmq_jobs_processed_total", { queue: "generation", outcome: "completed" }) >= 1 && grew(before.runner, text, "generation_article_duration_seconds_count", { outcome: "completed" }) >= 1,
      10_000,
      "the runner to count the article's job",
    );
    for (const state of ["waiting", "active", "delayed"]) expect(runner).toMatch(new RegExp(`bullmq_queue_jobs\\{[^}]*queue="generation"[^}]*state="${state}"`));
    expect(grew(before.runner, runner, "model_tokens_total", { kind: "completion" })).toBeGreaterThan(0);
    expect(grew(before.runner, runner, "model_cost_usd_total")).toBeGreaterThan(0);
    expect(grew(before.runner, runner, "generation_step_duration_seconds_count", { mode: "live" })).toBeGreaterThanOrEqual(1);

    const dispatcher = await eventually(() => scrape(stack.metricsUrls.webhookDispatcher), (text) => grew(before.dispatcher, text, "webhook_attempts_total", { outcome: "delivered" }) >= 1, 10_000, "a delivered attempt counted");
    expect(dispatcher).toMatch(/bullmq_queue_jobs\{[^}]*queue="webhooks"/);

    const accounts = await scrape(stack.metricsUrls.accountsBilling);
    expect(grew(before.accounts, accounts, "quota_reservations_total", { outcome: "reserved" })).toBeGreaterThanOrEqual(1);
  });
});

describe("queue dashboard", () => {
  test("answers 401 without the operator's identity token (another caller's too) and lists the queues with it", async () => {
    const base = `${stack.metricsUrls.gateway}/queues`;
    const operatorToken = stack.identity.currentToken("operator")!;
    expect((await fetch(base)).status).toBe(401);
    expect((await fetch(`${base}/api/queues`, { headers: { authorization: "Bearer not-the-token-at-all" } })).status).toBe(401);
    expect((await fetch(`${base}/api/queues`, { headers: { authorization: `Bearer ${stack.identity.currentToken("gateway")}` } })).status).toBe(401);
    const page = await fetch(base, { headers: { authorization: `Bearer ${operatorToken}` } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<html");
    const basic = `Basic ${Buffer.from(`operator:${operatorToken}`).toString("base64")}`;
    const api = await fetch(`${base}/api/queues`, { headers: { authorization: basic } });
    expect(api.status).toBe(200);
    const names = ((await api.json()) as { queues: { name: string }[] }).queues.map((q) => q.name).sort();
    expect(names).toEqual(["endpoint-deliveries", "endpoint-events", "generation", "publishing", "webhooks"]);
    // Not on the public port.
    expect((await fetch(`${stack.baseUrl}/queues`, { headers: { authorization: `Bearer ${operatorToken}` } })).status).toBe(404);
  });
});

describe("traces", () => {
  let traced: Stack | undefined;
  const spans: { service: string; name: string; traceId: string; requestId?: string }[] = [];
  const lines: string[] = [];
  let collector: ReturnType<typeof Bun.serve> | undefined;
  const id = `${process.pid}_${randomBytes(3).toString("hex")}`;
  const databaseUrl = `postgres://postgres@127.0.0.1:5432/articles_test_${id}`;
  const redisPrefix = `test-${id}`;

  beforeAll(async () => {
    // OTLP/HTTP JSON, the exporter's format: resourceSpans → scopeSpans → spans.
    collector = Bun.serve({
      port: 0,
      async fetch(request) {
        const body = (await request.json()) as any;
        for (const rs of body.resourceSpans ?? []) {
          const service = rs.resource?.attributes?.find((a: any) => a.key === "service.name")?.value?.stringValue ?? "";
          for (const ss of rs.scopeSpans ?? []) for (const span of ss.spans ?? []) {
            const requestId = span.attributes?.find((a: any) => a.key === "request.id")?.value?.stringValue;
            spans.push({ service, name: span.name, traceId: span.traceId, requestId });
          }
        }
        return Response.json({});
      },
    });
    traced = await startStack({
      randomPorts: true,
      output: "pipe",
      env: {
        ...TEST_STACK_ENV,
        LOG_LEVEL: "info",
        DATABASE_URL: databaseUrl,
        REDIS_URL: stack.env.REDIS_URL ?? "redis://127.0.0.1:6379",
        REDIS_PREFIX: redisPrefix,
        OPENAI_API_KEY: undefined,
        OPENAI_BASE_URL: undefined,
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}`,
        OTEL_BSP_SCHEDULE_DELAY: "200",
        METRICS_PORT: "0",
      },
    });
    // Every process's stdout is read (a full pipe would stall it); the lines are kept for the check.
    for (const child of traced.processes.values()) {
      const stdout = child.stdout as ReadableStream<Uint8Array>;
      (async () => {
        const decoder = new TextDecoder();
        for await (const chunk of stdout as unknown as AsyncIterable<Uint8Array>) lines.push(...decoder.decode(chunk, { stream: true }).split("\n"));
      })().catch(() => {});
    }
  }, 120_000);

  afterAll(async () => {
    await traced?.stop();
    collector?.stop(true);
    await dropTestData(databaseUrl, redisPrefix);
  }, 60_000);

  test("every answer carries an X-Request-Id (the client's usable one, else a new one) and the gateway logs one access line with it", async () => {
    const tenantHere = await webhookTenant({ ...stack, ...traced!, databaseUrl, redisPrefix } as TestStack);
    const given = `support-${randomBytes(6).toString("hex")}`;
    const echoed = await tenantHere.api.get("/v1/articles?per_page=1&status=queued", { headers: { "x-request-id": given } });
    expect(echoed.status).toBe(200);
    expect(echoed.headers.get("x-request-id")).toBe(given);
    // An unusable id (spaces, too short) is replaced; a refusal carries one too.
    const replaced = await tenantHere.api.get("/v1/articles/999999999", { headers: { "x-request-id": "bad id" } });
    expect(replaced.status).toBe(404);
    expect(replaced.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    // The services' own lines for the calls the request made carry its id too: the access line is
    // the gateway's "request" line, and there is one.
    const accessLines = () => lines.filter((l) => l.includes(`"request_id":"${given}"`) && l.includes('"service":"gateway"') && l.includes('"message":"request"'));
    const [line] = await eventually(async () => accessLines(), (found) => found.length > 0, 10_000, "the access line of the request");
    expect(JSON.parse(line!)).toMatchObject({ service: "gateway", message: "request", request_id: given, method: "GET", route: "/v1/articles", status: 200 });
    expect(accessLines()).toHaveLength(1);
    // The route template, never the query (a client's data) nor an id.
    expect(line).not.toContain("per_page");
    const replacedId = replaced.headers.get("x-request-id");
    await eventually(async () => lines.some((l) => l.includes(`"request_id":"${replacedId}"`) && l.includes('"route":"/v1/articles/:id"') && l.includes('"status":404')), Boolean, 10_000, "the refused request's access line");
  });

  test("one article creation is one trace through the gateway, article-store and the runner, its spans name the request id, and its log lines carry the trace id", async () => {
    const traceparentTrace = randomBytes(16).toString("hex");
    const requestId = `traced-${randomBytes(6).toString("hex")}`;
    const tenantHere = await webhookTenant({ ...stack, ...traced!, databaseUrl, redisPrefix } as TestStack);
    const res = await tenantHere.api.post(
      "/v1/articles",
      articleBody(tenantHere.projectId, { title: "Traced article", article_type: "webhook_quick", target_word_count: 100, point_of_view: "third_person" }),
      { headers: { traceparent: `00-${traceparentTrace}-${randomBytes(8).toString("hex")}-01`, "x-request-id": requestId } },
    );
    expect(res.status).toBe(201);
    const inTrace = () => spans.filter((s) => s.traceId === traceparentTrace);
    // Each process exports on its own schedule: wait for every one of them, not only the first.
    const expected = ["gateway", "article-store", "generation-runner"];
    await eventually(
      async () => inTrace(),
      (found) => ["POST /v1/articles", "generation run", "model call"].every((n) => found.some((s) => s.name === n)) && expected.every((service) => found.some((s) => s.service === service)),
      30_000,
      "the request's, the run's and the model call's spans, from the gateway, article-store and the runner",
    );
    const services = new Set(inTrace().map((s) => s.service));
    for (const service of expected) expect(services.has(service)).toBe(true);
    // Every span of the request, in every process, names its request id.
    expect(inTrace().filter((s) => s.requestId !== requestId)).toEqual([]);
    const logged = lines.filter((l) => l.includes(`"trace_id":"${traceparentTrace}"`));
    expect(logged.some((l) => l.includes('"service":"generation-runner"'))).toBe(true);
  }, 60_000);
  test("a call to the public gRPC API is traced like an HTTP request: a gateway span continuing the caller's trace, naming the request id its access line carries", async () => {
    const tenantHere = await webhookTenant({ ...stack, ...traced!, databaseUrl, redisPrefix } as TestStack);
    const traceId = randomBytes(16).toString("hex");
    const requestId = `grpc-traced-${randomBytes(6).toString("hex")}`;
    const articles = createClient(ArticleService, createGrpcTransport({ baseUrl: traced!.publicGrpcUrl, defaultTimeoutMs: 10_000 }));
    await articles.listArticles(
      {},
      { headers: { authorization: `Bearer ${tenantHere.token}`, traceparent: `00-${traceId}-${randomBytes(8).toString("hex")}-01`, "x-request-id": requestId } },
    );
    const span = await eventually(
      async () => spans.find((s) => s.traceId === traceId && s.service === "gateway" && s.name === "articles.api.v1.ArticleService/ListArticles"),
      Boolean,
      30_000,
      "the gateway's span of the call",
    );
    expect(span!.requestId).toBe(requestId);
    const line = await eventually(
      async () => lines.find((l) => l.includes(`"request_id":"${requestId}"`) && l.includes('"message":"call"') && l.includes('"service":"gateway"')),
      Boolean,
      10_000,
      "the call's access line",
    );
    expect(JSON.parse(line!)).toMatchObject({ method: "articles.api.v1.ArticleService/ListArticles", code: "ok", trace_id: traceId, account_id: tenantHere.accountId });
  });
});
