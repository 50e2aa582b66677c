// The monitoring kit (deploy/k8s/monitoring): the PodMonitor scrapes every process on its metrics
// port, every alert and dashboard query names metrics and labels the processes really export
// (services/kit/src/metrics.ts, prom-client's defaults, Prometheus's `up`), every alert tells the
// on-call engineer what to look at, and the kustomization renders: with a small renderer of its
// own here (deploy/k8s/render.ts has no configMapGenerator).
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import client from "prom-client";
import { renderKustomization, type K8sObject } from "../../deploy/k8s/render.ts";
import { registry, rpcMetricsInterceptor } from "../../services/kit/src/metrics.ts";
import { QUEUES } from "../../services/kit/src/queues.ts";
import { alerts, byKind, dashboard, dashboardText, monitoring, panels, parsePromql, podMonitor, queries, records, rules } from "../harness/monitoring-kit.ts";

const ROOT = join(import.meta.dir, "../..");
const K8S = join(ROOT, "deploy/k8s");
const SETUPS = ["base", "overlays/local", "overlays/production"] as const;
const rendered = Object.fromEntries(SETUPS.map((dir) => [dir, renderKustomization(join(K8S, dir))])) as Record<(typeof SETUPS)[number], K8sObject[]>;
const JOB = "article-service";

// ---- What the processes export ---------------------------------------------------------------

const METRICS_SOURCE = readFileSync(join(ROOT, "services/kit/src/metrics.ts"), "utf8");

/** Metric names declared in metrics.ts, histograms as their _bucket/_count/_sum series. */
function declaredMetrics(): Set<string> {
  const names = new Set<string>();
  const add = (type: string, name: string) => {
    if (type === "Histogram") for (const suffix of ["_bucket", "_count", "_sum"]) names.add(name + suffix);
    else if (type === "Summary") for (const suffix of ["", "_count", "_sum"]) names.add(name + suffix);
    else names.add(name);
  };
  const typed = new Set<string>();
  for (const m of METRICS_SOURCE.matchAll(/new client\.(Counter|Gauge|Histogram|Summary)\(\{\s*name: "([^"]+)"/g)) (add(m[1]!, m[2]!), typed.add(m[2]!));
  for (const m of METRICS_SOURCE.matchAll(/new (Counter|Histogram)Series\(\s*"([^"]+)"/g)) (add(m[1]!, m[2]!), typed.add(m[2]!));
  // Every `name: "…"` is one of the declarations above (a new form of declaration would be missed).
  for (const m of METRICS_SOURCE.matchAll(/\bname: "([^"]+)"/g)) if (!typed.has(m[1]!)) throw new Error(`metrics.ts declares ${m[1]} in a form this test does not read`);
  return names;
}

// prom-client's default process metrics the alerts and the dashboard use (initMetrics collects them).
const PROM_CLIENT_DEFAULTS = ["process_cpu_seconds_total", "process_resident_memory_bytes", "process_start_time_seconds", "nodejs_eventloop_lag_p99_seconds", "nodejs_heap_size_used_bytes"];

const KNOWN_METRICS = new Set([...declaredMetrics(), ...PROM_CLIENT_DEFAULTS, "up", ...records.map((r) => r.record as string)]);

// Labels: the declared labelNames, the keys of the plain series' cells (metrics.ts and the
// gateway's request observer), the `service` every process sets, the histograms' `le`, and what the
// PodMonitor's targets carry.
function knownLabels(): Set<string> {
  const labels = new Set(["service", "le", "job", "namespace", "pod", "container", "endpoint", "instance"]);
  for (const m of METRICS_SOURCE.matchAll(/labelNames: \[([^\]]*)\]/g)) for (const l of m[1]!.matchAll(/"(\w+)"/g)) labels.add(l[1]!);
  const observer = readFileSync(join(ROOT, "gateway/src/plugins/observability.ts"), "utf8");
  for (const m of (METRICS_SOURCE + observer).matchAll(/\.cell\(\{([^}]*)\}\)/g)) for (const part of m[1]!.split(",")) labels.add(part.trim().match(/^\w+/)![0]);
  return labels;
}
const KNOWN_LABELS = knownLabels();

/** The code label's values, as the server interceptor writes them for each Connect code. */
async function recordedCodes(): Promise<Set<string>> {
  const interceptor = rpcMetricsInterceptor();
  const service = "monitoring.test.Probe";
  const codes = [0, ...Object.values(Code).filter((v): v is number => typeof v === "number")];
  for (const code of codes) {
    const next = async () => {
      if (code === 0) return {};
      throw new ConnectError("probe", code);
    };
    await interceptor(next as never)({ service: { typeName: service }, method: { name: `Probe${code}` } } as never).catch(() => undefined);
  }
  const metric = await registry.getSingleMetric("rpc_server_requests_total")!.get();
  return new Set(metric.values.filter((v) => v.labels.rpc_service === service).map((v) => String(v.labels.code)));
}

// ---- Tests -------------------------------------------------------------------------------------

describe("deploy/k8s/monitoring renders", () => {
  test("a PodMonitor, a PrometheusRule and the dashboard's ConfigMap, all in article-service", () => {
    expect(monitoring.map((o) => `${o.apiVersion} ${o.kind}`).sort()).toEqual(["monitoring.coreos.com/v1 PodMonitor", "monitoring.coreos.com/v1 PrometheusRule", "v1 ConfigMap"]);
    for (const o of monitoring) expect(o.metadata.namespace).toBe("article-service");
  });

  test("the dashboard ships as a ConfigMap Grafana's sidecar loads (grafana_dashboard: \"1\")", () => {
    const [configMap] = byKind("ConfigMap");
    expect(configMap.metadata.labels.grafana_dashboard).toBe("1");
    const files = Object.keys(configMap.data);
    expect(files.length).toBe(1);
    expect(files[0]).toMatch(/\.json$/);
    expect(configMap.data[files[0]!]).toBe(dashboardText);
  });
});

describe.each(SETUPS)("the PodMonitor scrapes every process of deploy/k8s/%s", (setup) => {
  const objects = rendered[setup];
  const deployments = objects.filter((o) => o.kind === "Deployment") as any[];
  const selects = (selector: any, labels: Record<string, string>) =>
    Object.entries(selector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v) &&
    (selector?.matchExpressions ?? []).every((e: { key: string; operator: string; values?: string[] }) =>
      e.operator === "In" ? e.values!.includes(labels[e.key]!) : e.operator === "NotIn" ? !e.values!.includes(labels[e.key]!) : e.operator === "Exists" ? e.key in labels : !(e.key in labels),
    );

  test("its selector matches every Deployment's pods, in their namespace", () => {
    expect(deployments.length).toBe(6);
    for (const d of deployments) {
      expect({ name: d.metadata.name, selected: selects(podMonitor.spec.selector, d.spec.template.metadata.labels) }).toEqual({ name: d.metadata.name, selected: true });
      expect(podMonitor.spec.namespaceSelector.matchNames).toContain(d.metadata.namespace);
      // The job label the alerts and the dashboard select on comes from this pod label.
      expect(d.spec.template.metadata.labels[podMonitor.spec.jobLabel]).toBe(JOB);
    }
  });

  test("each pod's container, named after its process, has the endpoint's port, and the metrics NetworkPolicy admits it", () => {
    const scrape = objects.find((o) => o.kind === "NetworkPolicy" && o.metadata.name === "allow-metrics-scrape") as any;
    const admitted = scrape.spec.ingress.flatMap((rule: any) => rule.ports.map((p: any) => p.port));
    for (const endpoint of podMonitor.spec.podMetricsEndpoints) {
      expect({ port: endpoint.port, path: endpoint.path, interval: endpoint.interval }).toEqual({ port: "metrics", path: "/metrics", interval: "15s" });
      for (const d of deployments) {
        const containers = d.spec.template.spec.containers.filter((c: any) => (c.ports ?? []).some((p: any) => p.name === endpoint.port));
        expect({ deployment: d.metadata.name, containers: containers.map((c: any) => c.name) }).toEqual({ deployment: d.metadata.name, containers: [d.metadata.name] });
        expect(admitted).toContain(containers[0].ports.find((p: any) => p.name === endpoint.port).containerPort);
      }
    }
  });
});

describe("alerts", () => {
  test("every alert has a unique name, a severity, a summary, a description and a runbook hint", () => {
    expect(alerts.length).toBeGreaterThanOrEqual(12);
    expect(new Set(alerts.map((a) => a.alert)).size).toBe(alerts.length);
    for (const a of alerts) {
      expect({ alert: a.alert, severity: ["critical", "warning"].includes(a.labels?.severity) }).toEqual({ alert: a.alert, severity: true });
      for (const key of ["summary", "description", "runbook"]) expect({ alert: a.alert, key, set: typeof a.annotations?.[key] === "string" && a.annotations[key].trim().length > 0 }).toEqual({ alert: a.alert, key, set: true });
    }
  });

  test("each runbook hint names sections that exist in the pages it names", () => {
    const headings = (file: string) => new Set([...readFileSync(join(ROOT, file), "utf8").matchAll(/^#{2,4} (.+)$/gm)].map((m) => m[1]!.trim()));
    for (const a of alerts) {
      let file: string | undefined;
      const named: string[] = [];
      for (const m of (a.annotations.runbook as string).matchAll(/([\w./-]+\.md)|"([^"]+)"/g)) {
        if (m[1]) {
          expect(existsSync(join(ROOT, m[1]))).toBe(true);
          file = m[1];
        } else {
          expect({ alert: a.alert, file }).not.toEqual({ alert: a.alert, file: undefined });
          named.push(`${file}: ${m[2]}`);
          expect({ alert: a.alert, section: m[2], found: headings(file!).has(m[2]!) }).toEqual({ alert: a.alert, section: m[2], found: true });
        }
      }
      expect(named.length).toBeGreaterThan(0);
    }
  });

  test("the recorded memory limits are the production overlay's, one per process", () => {
    const bytes = (quantity: string) => {
      const m = quantity.match(/^(\d+)(Ki|Mi|Gi)?$/)!;
      return Number(m[1]) * 1024 ** ["", "Ki", "Mi", "Gi"].indexOf(m[2] ?? "");
    };
    const limits = Object.fromEntries(
      rendered["overlays/production"].filter((o) => o.kind === "Deployment").map((d: any) => {
        const container = d.spec.template.spec.containers.find((c: any) => c.name === d.metadata.name);
        return [container.name, bytes(container.resources.limits.memory)];
      }),
    );
    const recorded = Object.fromEntries(records.filter((r) => r.record === "article_service:container_memory_limit_bytes").map((r) => [r.labels.container, Number(String(r.expr).match(/^vector\((\d+)\)$/)![1])]));
    expect(recorded).toEqual(limits);
  });
});

describe("the dashboard", () => {
  test("is a Grafana dashboard on a ${datasource} Prometheus variable, with its rows", () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    expect(dashboard.uid).toBe("article-service");
    const variable = dashboard.templating.list.find((v: any) => v.name === "datasource");
    expect({ type: variable.type, query: variable.query }).toEqual({ type: "datasource", query: "prometheus" });
    expect(dashboard.panels.filter((p: any) => p.type === "row").map((p: any) => p.title)).toEqual(["API", "Services", "Generation", "Providers", "Webhooks", "Process"]);
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
    for (const p of panels.filter((p) => p.type !== "row")) {
      expect({ panel: p.title, datasource: p.datasource }).toEqual({ panel: p.title, datasource: { type: "prometheus", uid: "${datasource}" } });
      expect(p.targets.length).toBeGreaterThan(0);
      for (const t of p.targets) expect(t.datasource.uid).toBe("${datasource}");
    }
  });

  test("its variables query known metrics and labels", () => {
    for (const v of dashboard.templating.list.filter((v: any) => v.type === "query")) {
      const query = typeof v.query === "string" ? v.query : v.query.query;
      const m = query.match(/^label_values\((.*),\s*(\w+)\)$/);
      expect(m).not.toBeNull();
      const parsed = parsePromql(m[1]);
      expect(parsed.metrics.filter((name: string) => !KNOWN_METRICS.has(name))).toEqual([]);
      expect([m[2], ...parsed.labels].filter((l) => !KNOWN_LABELS.has(l))).toEqual([]);
    }
  });
});

describe("every alert expression and dashboard query", () => {
  test("the prom-client defaults listed here are ones prom-client exports", async () => {
    const fresh = new client.Registry();
    client.collectDefaultMetrics({ register: fresh });
    const exported = new Set((await fresh.getMetricsAsJSON()).flatMap((m) => [m.name, ...(m.type === ("histogram" as never) ? ["_bucket", "_count", "_sum"].map((s) => m.name + s) : [])]));
    expect(PROM_CLIENT_DEFAULTS.filter((name) => !exported.has(name))).toEqual([]);
  });

  test("uses only metric names the processes export (metrics.ts, prom-client's defaults listed here, up, the recorded limits)", () => {
    expect(queries.length).toBeGreaterThan(40);
    const unknown: string[] = [];
    for (const { where, expr } of queries) {
      const { metrics } = parsePromql(expr);
      // A query reads a series, except the recorded constants (the memory limits).
      if (!metrics.length && !/^vector\(\d+\)$/.test(expr.trim())) unknown.push(`${where}: no metric in ${expr}`);
      for (const name of metrics) if (!KNOWN_METRICS.has(name)) unknown.push(`${where}: ${name}`);
    }
    expect(unknown).toEqual([]);
  });

  test("uses only label names the series carry", () => {
    const unknown = queries.flatMap(({ where, expr }) => parsePromql(expr).labels.filter((l) => !KNOWN_LABELS.has(l)).map((l) => `${where}: ${l}`));
    expect(unknown).toEqual([]);
  });

  test("selects the PodMonitor's job on every series it reads (the recorded limits aside)", () => {
    const unscoped: string[] = [];
    for (const { where, expr } of queries) {
      const { metrics, matchers } = parsePromql(expr);
      const scoped = matchers.filter((m) => m.label === "job" && m.op === "=" && m.value === JOB).length;
      const read = metrics.filter((name) => !name.startsWith("article_service:")).length;
      if (scoped !== read) unscoped.push(`${where}: ${read} series read, ${scoped} with job="${JOB}"`);
    }
    expect(unscoped).toEqual([]);
  });

  test("matches label values the processes write: codes, queues, states and outcomes", async () => {
    const codes = await recordedCodes();
    expect(codes.has("ok") && codes.has("invalid_argument") && codes.has("unavailable")).toBe(true);
    const queues = new Set(Object.values(QUEUES).map((q) => q.name));
    const states = new Set([...METRICS_SOURCE.match(/QUEUE_STATES = \[([^\]]*)\]/)![1]!.matchAll(/"(\w+)"/g)].map((m) => m[1]!));
    // Outcomes, reasons, kinds and modes are listed in metrics.ts's help texts or docs/operations.md's metrics table.
    const readme = readFileSync(join(ROOT, "docs/operations.md"), "utf8");
    const observability = readme.slice(readme.indexOf("## Observability"), readme.indexOf("\n## ", readme.indexOf("## Observability") + 1));
    const words = new Set([...(METRICS_SOURCE + observability).matchAll(/\w+/g)].map((m) => m[0]));
    const wrong: string[] = [];
    for (const { where, expr } of queries) {
      for (const m of parsePromql(expr).matchers) {
        const values = /^[\w|]+$/.test(m.value) ? m.value.split("|") : [];
        const known = m.label === "code" ? codes : m.label === "queue" ? queues : m.label === "state" ? states : ["outcome", "reason", "kind", "mode"].includes(m.label) ? words : undefined;
        if (known) for (const v of values) if (!known.has(v)) wrong.push(`${where}: ${m.label}="${v}"`);
      }
    }
    expect(wrong).toEqual([]);
  });

  test("the metric-name reader itself finds names and leaves functions, keywords and variables out", () => {
    const parsed = parsePromql(
      'histogram_quantile(0.99, sum by (le, route) (rate(http_request_duration_seconds_bucket{job="article-service",namespace="$namespace"}[$__rate_interval]))) / on(container) group_left() article_service:x > 1e3 and up',
    );
    expect(parsed.metrics).toEqual(["http_request_duration_seconds_bucket", "article_service:x", "up"]);
    expect(parsed.labels.sort()).toEqual(["container", "job", "le", "namespace", "route"]);
    expect(parsePromql('sum(rate(http_requests_totl{job="x"}[5m]))').metrics.filter((n) => !KNOWN_METRICS.has(n))).toEqual(["http_requests_totl"]);
    // A histogram's own name is no series: only its _bucket, _count and _sum are.
    expect(KNOWN_METRICS.has("http_request_duration_seconds")).toBe(false);
    expect(KNOWN_METRICS.has("rpc_server_duration_seconds_count")).toBe(true);
    expect(KNOWN_METRICS.has("provider_circuit_state")).toBe(true);
  });
});
