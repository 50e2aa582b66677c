// The shipped dashboard and alert rules (deploy/k8s/monitoring) against a running stack, through
// Debian's Prometheus: it scrapes every process's metrics port with the labels the PodMonitor gives
// (job, namespace, pod, container) and evaluates the PrometheusRule's groups. After real traffic
// (articles over a provider with a rate limit, a completion webhook), every dashboard query must
// return series, and every metric each rule expression reads must exist with the labels the
// expression matches on: a renamed metric or label makes a panel blank or an alert silent, and
// fails here. The alerts' firing logic is promtool's unit tests (monitoring-alert-rules.test.ts).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { startSimulator, type RunningSimulator } from "../../services/model-simulator/src/simulator.ts";
import { eventually } from "../harness/eventually.ts";
import { apiClient } from "../harness/http.ts";
import { panels, parsePromql, rule } from "../harness/monitoring-kit.ts";
import { freePort, startPrivateStack, type PrivateStack } from "../harness/private-infra.ts";
import { modelCatalogClient } from "../harness/service-clients.ts";
import { createTenant } from "../harness/tenants.ts";
import { CALLERS } from "../../services/kit/src/access-policy.ts";
import { startReceiver, type Receiver } from "../harness/webhook-receiver.ts";
import { articleBody, waitForArticle } from "./generation-support.ts";

const JOB = "article-service";
const NAMESPACE = "article-service";
// The process names the PodMonitor's `container` label carries, by the stack's process keys: each
// container is named as its process's caller identity (the operator runs in none).
const { operator: _operator, ...CONTAINERS } = CALLERS;
const LIMITED_RPM = 120;

let infra: PrivateStack;
let limited: RunningSimulator;
let receiver: Receiver;
let prometheus: Subprocess | undefined;
let prometheusUrl: string;
let dir: string;

/** Prometheus's instant query API; fails the test on a query Prometheus refuses. */
async function query(expr: string): Promise<{ metric: Record<string, string>; value?: [number, string] }[]> {
  const response = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(expr)}`);
  const body = (await response.json()) as { status: string; error?: string; data?: { result: { metric: Record<string, string>; value?: [number, string] }[] } };
  if (body.status !== "success") throw new Error(`Prometheus refused ${expr}: ${body.error}`);
  return body.data!.result;
}

interface RulesAnswer {
  data: { groups: { rules: { name: string; health: string; lastError?: string }[] }[] };
}

/** A dashboard query as Grafana sends it: its variables filled in. */
const asGrafanaSends = (expr: string) => expr.replace(/\$\{?namespace\}?/g, NAMESPACE).replace(/\$__rate_interval/g, "1m").replace(/\$__interval/g, "15s");

beforeAll(async () => {
  [limited, receiver] = await Promise.all([startSimulator({ port: 0, provider: { requestsPerMinute: LIMITED_RPM } }), Promise.resolve(startReceiver())]);
  infra = await startPrivateStack({ PROVIDER_LIMITED_BASE_URL: `${limited.url}/v1` });
  const { stack } = infra;
  // A model paced to its provider's limit: the provider budget's gauges and waits come from it.
  await modelCatalogClient(stack).addModel({ model: { id: "limited:sim-fast", active: true, inputPricePerMillion: "1", outputPricePerMillion: "1", requestsPerMinute: LIMITED_RPM } });

  dir = mkdtempSync(join(tmpdir(), "prometheus-"));
  writeFileSync(join(dir, "rules.yaml"), stringify({ groups: rule.spec.groups }));
  const targets = Object.entries(CONTAINERS).map(([key, container]) => {
    const url = stack.metricsUrls[key as keyof typeof stack.metricsUrls];
    if (!url) throw new Error(`the stack serves no metrics for ${key}`);
    return { targets: [new URL(url).host], labels: { namespace: NAMESPACE, pod: `${container}-0`, container } };
  });
  writeFileSync(
    join(dir, "prometheus.yml"),
    stringify({
      global: { scrape_interval: "1s", evaluation_interval: "1s" },
      rule_files: ["rules.yaml"],
      scrape_configs: [{ job_name: JOB, metrics_path: "/metrics", static_configs: targets }],
    }),
  );
  const port = await freePort();
  prometheusUrl = `http://127.0.0.1:${port}`;
  prometheus = Bun.spawn(["prometheus", `--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${port}`, "--log.level=warn"], {
    cwd: dir,
    stdout: "ignore",
    stderr: process.env.STACK_LOGS ? "inherit" : "ignore",
  });
  await eventually(() => fetch(`${prometheusUrl}/-/ready`).then((r) => r.status, () => 0), (status) => status === 200, 30_000, "Prometheus ready");
  await eventually(async () => (await query(`up{job="${JOB}"} == 1`)).length, (n) => n === targets.length, 30_000, "every process scraped");

  // Traffic: articles through the rate-limited model (several at once, so calls wait their turn),
  // one with a completion webhook, a refused request, and a read of an article that does not exist
  // (a service answering NOT_FOUND: the gRPC errors panel).
  const tenant = await createTenant(stack);
  const api = apiClient(stack.baseUrl, tenant.token);
  const hook = receiver.hook();
  const created = await Promise.all(
    [0, 1, 2].map(async (i) => (await api.post("/v1/articles", articleBody(tenant.projectId, { model: "limited:sim-fast", title: `Coffee notes ${i + 1}`, ...(i === 0 ? { webhook_url: hook.url } : {}) }))).body.data),
  );
  expect((await api.post("/v1/articles", {})).status).toBe(422);
  expect((await api.get(`/v1/articles/${crypto.randomUUID()}`)).status).toBe(404);
  await Promise.all(created.map((a) => waitForArticle(api, a.external_id, undefined, 90_000)));
  await hook.waitForRequests(1);
  // Two scrapes of every process after the traffic, so every rate has two samples in its window:
  // the oldest of the processes' latest scrapes is more than one scrape interval after it ended.
  const trafficEnded = Date.now() / 1000;
  await eventually(
    async () => Number((await query(`min(timestamp(up{job="${JOB}"}))`))[0]?.value?.[1] ?? 0),
    (lastScrape) => lastScrape > trafficEnded + 1,
    30_000,
    "two scrapes of every process after the traffic",
  );
}, 240_000);

afterAll(async () => {
  prometheus?.kill();
  await prometheus?.exited;
  receiver?.stop();
  await infra?.stop();
  await limited?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
}, 60_000);

describe("Debian's Prometheus over a running stack", () => {
  test("loads the PrometheusRule's groups and evaluates every rule without an error", async () => {
    const expected = rule.spec.groups.flatMap((g: { rules: unknown[] }) => g.rules).length;
    const loaded = await eventually(
      async () => ((await (await fetch(`${prometheusUrl}/api/v1/rules`)).json()) as RulesAnswer).data.groups.flatMap((g) => g.rules),
      (rules) => rules.length === expected && rules.every((r) => r.health === "ok"),
      10_000,
      "every rule loaded and evaluated healthy",
    );
    expect(loaded.map((r) => r.lastError ?? "")).toEqual(loaded.map(() => ""));
  });

  test("every dashboard query returns series", async () => {
    const blank: string[] = [];
    for (const panel of panels) {
      for (const target of panel.targets ?? []) {
        const series = await query(asGrafanaSends(String(target.expr)));
        if (series.length === 0) blank.push(`panel "${panel.title}" ${target.refId}: ${target.expr}`);
      }
    }
    expect(blank).toEqual([]);
  });

  test("every metric a rule expression reads exists, with each label the expression matches on", async () => {
    const missing: string[] = [];
    for (const r of rule.spec.groups.flatMap((g: { rules: { alert?: string; record?: string; expr: string }[] }) => g.rules)) {
      const { metrics, matchers } = parsePromql(String(r.expr));
      for (const metric of new Set(metrics)) {
        if (metric.startsWith("article_service:")) continue; // the recording rules' own results
        const labels = [...new Set(matchers.filter((m) => m.metric === metric && m.label !== "job").map((m) => m.label))];
        const selector = `${metric}{job="${JOB}"${labels.map((l) => `, ${l}!=""`).join("")}}`;
        if ((await query(`count(${selector})`)).length === 0) missing.push(`${r.alert ?? r.record}: ${selector}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
