// The monitoring kit (deploy/k8s/monitoring) as the tests read it: the kustomization rendered (with
// a small renderer of its own: deploy/k8s/render.ts has no configMapGenerator), the PrometheusRule's
// rules, the dashboard's panels, every PromQL expression of both, and a reader of the metric names,
// label names and matchers in an expression. Shared by the unit test of the kit and the test that
// runs Debian's Prometheus against a stack.
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parse, parseAllDocuments } from "yaml";
import type { K8sObject } from "../../deploy/k8s/render.ts";

const ROOT = join(import.meta.dir, "../..");
export const MONITORING = join(ROOT, "deploy/k8s/monitoring");

const KUSTOMIZATION_FIELDS = new Set(["apiVersion", "kind", "namespace", "resources", "configMapGenerator"]);

/** Renders deploy/k8s/monitoring as kustomize does, for the fields it uses; refuses any other. */
export function renderMonitoring(dir: string): K8sObject[] {
  const k = parse(readFileSync(join(dir, "kustomization.yaml"), "utf8")) as Record<string, any>;
  for (const key of Object.keys(k)) if (!KUSTOMIZATION_FIELDS.has(key)) throw new Error(`kustomization.yaml: "${key}" is not rendered by this test`);
  const objects: K8sObject[] = [];
  for (const entry of k.resources ?? []) {
    for (const doc of parseAllDocuments(readFileSync(resolve(dir, entry), "utf8"))) {
      if (doc.errors.length) throw new Error(`${entry}: ${doc.errors[0]!.message}`);
      if (doc.contents !== null) objects.push(doc.toJSON() as K8sObject);
    }
  }
  for (const generator of k.configMapGenerator ?? []) {
    const { name, files = [], options = {}, ...rest } = generator;
    if (Object.keys(rest).length) throw new Error(`configMapGenerator ${name}: ${Object.keys(rest).join(", ")} not rendered by this test`);
    const { labels, disableNameSuffixHash, ...otherOptions } = options;
    if (Object.keys(otherOptions).length) throw new Error(`configMapGenerator ${name}: options ${Object.keys(otherOptions).join(", ")} not rendered by this test`);
    // With the hash suffix kustomize would rename the ConfigMap on every change.
    if (disableNameSuffixHash !== true) throw new Error(`configMapGenerator ${name}: only disableNameSuffixHash: true is rendered by this test`);
    const data: Record<string, string> = {};
    for (const file of files as string[]) {
      const [key, path] = file.includes("=") ? file.split("=", 2) : [file.split("/").pop()!, file];
      data[key!] = readFileSync(resolve(dir, path!), "utf8");
    }
    objects.push({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, ...(labels ? { labels } : {}) }, data });
  }
  if (k.namespace) for (const o of objects) o.metadata.namespace = k.namespace;
  return objects;
}

export const monitoring = renderMonitoring(MONITORING);
export const byKind = (kind: string) => monitoring.filter((o) => o.kind === kind) as any[];
export const [podMonitor] = byKind("PodMonitor");
export const [rule] = byKind("PrometheusRule");
export const dashboardText = readFileSync(join(MONITORING, "dashboard.json"), "utf8");
export const dashboard = JSON.parse(dashboardText);
export const rules: any[] = rule.spec.groups.flatMap((g: any) => g.rules);
export const alerts = rules.filter((r) => r.alert);
export const records = rules.filter((r) => r.record);
export const panels: any[] = dashboard.panels.flatMap((p: any) => [p, ...(p.panels ?? [])]);
export const queries: { where: string; expr: string }[] = [
  ...rules.map((r) => ({ where: `rule ${r.alert ?? r.record}`, expr: String(r.expr) })),
  ...panels.flatMap((p) => (p.targets ?? []).map((t: any) => ({ where: `panel "${p.title}" ${t.refId}`, expr: String(t.expr) }))),
];

const KEYWORDS = new Set(["and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right", "bool", "offset", "inf", "nan"]);

export interface Parsed {
  metrics: string[];
  labels: string[];
  matchers: { metric?: string; label: string; op: string; value: string }[];
}

/** The metric names, label names and label matchers of a PromQL expression (Grafana's variables left out). */
export function parsePromql(expr: string): Parsed {
  let s = expr.replace(/\$\{?\w+\}?/g, "");
  const labels: string[] = [];
  const matchers: Parsed["matchers"] = [];
  s = s.replace(/([a-zA-Z_:][\w:]*)?\s*\{([^}]*)\}/g, (_all, metric: string | undefined, inner: string) => {
    for (const m of inner.matchAll(/([a-zA-Z_]\w*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"/g)) {
      labels.push(m[1]!);
      matchers.push({ metric, label: m[1]!, op: m[2]!, value: m[3]! });
    }
    return ` ${metric ?? ""} `;
  });
  s = s.replace(/"(?:[^"\\]|\\.)*"/g, " ").replace(/\[[^\]]*\]/g, " ");
  s = s.replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g, (_all, _kw, inner: string) => {
    for (const l of inner.split(",").map((x) => x.trim()).filter(Boolean)) labels.push(l);
    return " ";
  });
  const metrics = [...s.matchAll(/(?<![\w:.])([a-zA-Z_:][\w:]*)(?![\w:])(?!\s*\()/g)].map((m) => m[1]!).filter((name) => !KEYWORDS.has(name));
  return { metrics, labels, matchers };
}
