// The Kubernetes manifests (deploy/k8s): the base and each overlay rendered, every object checked
// against the Kubernetes API schemas (kubernetes-models; KEDA's ScaledObject against its CRD's)
// with unknown fields refused as the API server's strict field validation does, then what the
// manifests promise: security contexts, probes, disruption budgets, autoscalers on the real
// queue keys, and network policies that allow exactly the calls the code makes.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { Namespace } from "kubernetes-models/v1/Namespace";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Secret } from "kubernetes-models/v1/Secret";
import { ServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import { Job } from "kubernetes-models/batch/v1/Job";
import { Service } from "kubernetes-models/v1/Service";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import { Ingress } from "kubernetes-models/networking.k8s.io/v1/Ingress";
import { HorizontalPodAutoscaler } from "kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler";
import { ScaledObject } from "@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject";
import { renderKustomization, type K8sObject } from "../../deploy/k8s/render.ts";
import { CONTAINER_SIZED_ENV, PROCESS_START_ENV, RUNTIME_START_ENV } from "../../deploy/local/stack.ts";
import { GRPC_PORT_OFFSET, SERVICE_URL_VARIABLES, type ServiceUrls } from "../../services/kit/src/config.ts";
import { QUEUES } from "../../services/kit/src/queues.ts";
import { queuePrefix } from "../../services/kit/src/redis.ts";

const ROOT = join(import.meta.dir, "../..");
const K8S = join(ROOT, "deploy/k8s");
const SETUPS = ["base", "overlays/local", "overlays/production"] as const;
const rendered = Object.fromEntries(SETUPS.map((dir) => [dir, renderKustomization(join(K8S, dir))])) as Record<(typeof SETUPS)[number], K8sObject[]>;

// Every kind the manifests may hold, with the model whose schema validates it.
const MODELS: Record<string, { prototype: { validate(): void } }> = {
  "v1/Namespace": Namespace,
  "v1/ConfigMap": ConfigMap,
  "v1/Secret": Secret,
  "v1/ServiceAccount": ServiceAccount,
  "batch/v1/Job": Job,
  "v1/Service": Service,
  "apps/v1/Deployment": Deployment,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
  "networking.k8s.io/v1/Ingress": Ingress,
  "autoscaling/v2/HorizontalPodAutoscaler": HorizontalPodAutoscaler,
  "keda.sh/v1alpha1/ScaledObject": ScaledObject,
};

/**
 * Validates `object` with the model's schema and returns the paths of fields the schema does not
 * know. The compiled schemas accept unknown fields, so the check watches which fields the
 * validator reads: an object it never enumerates (a map such as labels is enumerated) and a key
 * it never reads is a field the schema lacks, which the API server would reject.
 */
function validateStrictly(object: K8sObject): string[] {
  const model = MODELS[`${object.apiVersion}/${object.kind}`];
  if (!model) throw new Error(`no schema for ${object.apiVersion} ${object.kind}: add its model to MODELS`);
  const watched: { path: string; target: object; read: Set<PropertyKey>; enumerated: boolean }[] = [];
  const watch = (value: unknown, path: string): unknown => {
    if (!value || typeof value !== "object") return value;
    const record = { path, target: value, read: new Set<PropertyKey>(), enumerated: false };
    watched.push(record);
    const children = new Map<PropertyKey, unknown>();
    return new Proxy(value, {
      get(target, key, receiver) {
        record.read.add(key);
        const child = Reflect.get(target, key, receiver);
        if (!child || typeof child !== "object") return child;
        if (!children.has(key)) children.set(key, watch(child, `${path}.${String(key)}`));
        return children.get(key);
      },
      has(target, key) {
        record.read.add(key);
        return Reflect.has(target, key);
      },
      ownKeys(target) {
        record.enumerated = true;
        return Reflect.ownKeys(target);
      },
    });
  };
  // The model's validate() runs its schema's compiled validator on `this`.
  model.prototype.validate.call(watch(object, ""));
  return watched.flatMap((r) => (r.enumerated || Array.isArray(r.target) ? [] : Object.keys(r.target).filter((key) => !r.read.has(key)).map((key) => `${r.path}.${key}`)));
}

const ofKind = <T = any>(objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind) as unknown as T[];
const named = (objects: K8sObject[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name) as any;

const PROCESSES = ["gateway", "accounts-billing", "workflow-catalog", "article-store", "generation-runner", "webhook-dispatcher"] as const;
type Process = (typeof PROCESSES)[number];
const SERVICES = PROCESSES.filter((p) => p !== "gateway");
const kebab = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
const sourceDir = (p: Process) => join(ROOT, p === "gateway" ? "gateway/src" : `services/${p}/src`);

/** Which services a process calls: every serviceClient(…) it builds on one of the configured service addresses. */
function callsInCode(p: Process): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith(".ts")) files.push(path);
    }
  };
  walk(sourceDir(p));
  const called = new Set<string>();
  for (const file of files) for (const m of readFileSync(file, "utf8").matchAll(/serviceClient\([^;]*?(?:\.services|\burls)\.(\w+)/g)) called.add(kebab(m[1]));
  return [...called].sort();
}

describe.each(SETUPS)("deploy/k8s/%s", (setup) => {
  const objects = rendered[setup];

  test("every object is valid against its Kubernetes schema, with no unknown field", () => {
    expect(objects.length).toBeGreaterThan(20);
    const problems: string[] = [];
    for (const o of objects) {
      try {
        const unknown = validateStrictly(o);
        if (unknown.length) problems.push(`${o.kind}/${o.metadata.name}: unknown field ${unknown.join(", ")}`);
      } catch (error) {
        problems.push(`${o.kind}/${o.metadata.name}: ${(error as Error).message}`);
      }
    }
    expect(problems).toEqual([]);
  });

  test("names are unique and every namespaced object is in article-service", () => {
    const keys = objects.map((o) => `${o.kind}/${o.metadata.name}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const o of objects) expect(o.kind === "Namespace" ? o.metadata.name : o.metadata.namespace).toBe("article-service");
  });

  test("one Deployment per process, running its bundle, with Services that select it", () => {
    const deployments = ofKind(objects, "Deployment");
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual([...PROCESSES].sort());
    for (const d of deployments) {
      const [container] = d.spec.template.spec.containers;
      const dir = d.metadata.name === "gateway" ? "gateway/src" : `services/${d.metadata.name}/src`;
      expect(container.args).toEqual([`${dir}/main.bundle.js`]);
      // The image bundles every process's main.ts (deploy/container/Dockerfile).
      expect(existsSync(join(ROOT, dir, "main.ts"))).toBe(true);
      expect(d.spec.selector.matchLabels).toEqual({ "app.kubernetes.io/name": d.metadata.name });
      expect(d.spec.template.metadata.labels).toMatchObject(d.spec.selector.matchLabels);
    }
    for (const s of ofKind(objects, "Service")) {
      const d = named(objects, "Deployment", s.spec.selector["app.kubernetes.io/name"]);
      expect(d).toBeDefined();
      const portNames = d.spec.template.spec.containers[0].ports.map((p: { name: string }) => p.name);
      for (const port of s.spec.ports) expect(portNames).toContain(port.targetPort);
    }
  });

  test("each process is started with the settings npm start gives it (read only at start)", () => {
    for (const [name, settings] of Object.entries(PROCESS_START_ENV)) {
      const [container] = named(objects, "Deployment", kebab(name)).spec.template.spec.containers;
      const env = Object.fromEntries(container.env.map((e: { name: string; value?: string; valueFrom?: unknown }) => [e.name, e.value ?? e.valueFrom]));
      // A setting sized by the container (its memory limit) comes from the container, not a fixed value.
      expect(env).toMatchObject(Object.fromEntries(Object.entries(settings).map(([key, value]) => [key, CONTAINER_SIZED_ENV[key] ?? value])));
      expect(container.resources.limits.memory).toBeDefined();
    }
  });

  test("service ports, the ConfigMap's addresses and the probes agree", () => {
    const config = named(objects, "ConfigMap", "article-service-config").data;
    for (const [key, variable] of Object.entries(SERVICE_URL_VARIABLES) as [keyof ServiceUrls, string][]) {
      const name = kebab(key);
      const container = named(objects, "Deployment", name).spec.template.spec.containers[0];
      const env = Object.fromEntries(container.env.map((e: { name: string; value: string }) => [e.name, e.value]));
      const connect = Number(env.CONNECT_PORT);
      const grpc = Number(env.GRPC_PORT);
      expect(grpc).toBe(connect + GRPC_PORT_OFFSET);
      expect(config[variable]).toBe(`http://${name}:${connect}`);
      expect(named(objects, "Service", name).spec.ports.map((p: { port: number }) => p.port)).toEqual([connect, grpc]);
      const headless = named(objects, "Service", `${name}-grpc`);
      expect(headless.spec.clusterIP).toBe("None");
      expect(headless.spec.ports.map((p: { port: number }) => p.port)).toEqual([grpc]);
      // Readiness follows the dependencies (the whole-process check); liveness and startup only ask whether it answers.
      expect(container.readinessProbe.grpc).toEqual({ port: grpc });
      expect(container.livenessProbe.grpc).toEqual({ port: grpc, service: "liveness" });
      expect(container.startupProbe.grpc).toEqual({ port: grpc, service: "liveness" });
    }
    const gateway = named(objects, "Deployment", "gateway").spec.template.spec.containers[0];
    // Readiness is the gateway's own (a dependency's outage keeps it serving JSON 503s); liveness asks whether it answers.
    expect(gateway.readinessProbe.httpGet.path).toBe("/readyz");
    expect(gateway.livenessProbe.httpGet.path).toBe("/livez");
    // The probe paths exist in the gateway.
    const app = readFileSync(join(ROOT, "gateway/src/app.ts"), "utf8");
    expect(app).toContain('.get("/readyz"');
    expect(app).toContain('.get("/livez"');
  });

  test("every pod keeps serving a few seconds after it is told to stop (preStop), so a rolling update drops no request", () => {
    for (const deployment of objects.filter((o: any) => o.kind === "Deployment") as any[]) {
      expect({ name: deployment.metadata.name, preStop: deployment.spec.template.spec.containers[0].lifecycle?.preStop }).toEqual({ name: deployment.metadata.name, preStop: { sleep: { seconds: 5 } } });
      expect(deployment.spec.template.spec.terminationGracePeriodSeconds).toBeGreaterThan(5 + 20);
    }
  });

  test("the Ingress routes the public paths only: the health endpoints stay inside the cluster", () => {
    const ingress = named(objects, "Ingress", "gateway");
    const paths = ingress.spec.rules.flatMap((r: any) => r.http.paths.map((p: any) => p.path));
    expect(paths.sort()).toEqual(["/docs", "/images", "/user", "/v1"]);
  });

  test("every pod runs as the image's node user, read-only, with no privileges", () => {
    for (const d of ofKind(objects, "Deployment")) {
      const pod = d.spec.template.spec;
      expect(pod.automountServiceAccountToken).toBe(false);
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, seccompProfile: { type: "RuntimeDefault" } });
      for (const c of pod.containers) {
        expect(c.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } });
        const tmp = c.volumeMounts.find((m: { mountPath: string }) => m.mountPath === "/tmp");
        expect(pod.volumes.find((v: { name: string }) => v.name === tmp.name).emptyDir).toBeDefined();
        expect(c.resources.requests.cpu).toBeDefined();
        expect(c.resources.limits.memory).toBeDefined();
      }
    }
    // The numeric user is the image's `node` user: node images create it with uid 1000, and the
    // Dockerfile creates it with that uid on any other base (BASE_IMAGE).
    const dockerfile = readFileSync(join(ROOT, "deploy/container/Dockerfile"), "utf8");
    expect(dockerfile).toMatch(/^ARG BASE_IMAGE=node:/m);
    expect(dockerfile).toMatch(/^RUN id -u node .*useradd --uid 1000 /m);
    expect(dockerfile).toMatch(/^USER node$/m);
  });

  test("every Deployment has a PodDisruptionBudget that selects exactly its pods", () => {
    const budgets = ofKind(objects, "PodDisruptionBudget");
    for (const d of ofKind(objects, "Deployment")) {
      const matching = budgets.filter((b) => Object.entries(b.spec.selector.matchLabels).every(([k, v]) => d.spec.template.metadata.labels[k] === v));
      expect(matching.length).toBe(1);
      expect(matching[0].spec.maxUnavailable).toBe(1);
    }
    expect(budgets.length).toBe(PROCESSES.length);
  });

  test("the Ingress routes to the gateway's Service, the only one reachable from outside", () => {
    const [ingress] = ofKind(objects, "Ingress");
    expect(ofKind(objects, "Ingress").length).toBe(1);
    const backend = ingress.spec.rules[0].http.paths[0].backend.service;
    expect(backend).toEqual({ name: "gateway", port: { name: "http" } });
    const host = ingress.spec.rules[0].host;
    if (setup === "overlays/local") expect(host).toBe("articles.localhost");
    else expect(host).toBe("articles.example.com");
    expect(named(objects, "ConfigMap", "article-service-config").data.PUBLIC_BASE_URL).toMatch(new RegExp(`^https?://${host.replace(/\./g, "\\.")}$`));
    for (const s of ofKind(objects, "Service")) expect(s.spec.type ?? "ClusterIP").toBe("ClusterIP");
  });

  describe("network policies", () => {
    const policies = ofKind(objects, "NetworkPolicy");
    type Peer = { namespace: string; labels: Record<string, string> } | { ip: string };
    const pod = (name: string, namespace = "article-service"): Peer => ({ namespace, labels: { "app.kubernetes.io/name": name, "app.kubernetes.io/part-of": "article-service" } });
    const selects = (selector: any, labels: Record<string, string>) =>
      Object.entries(selector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v) &&
      (selector?.matchExpressions ?? []).every((e: { key: string; operator: string; values?: string[] }) =>
        e.operator === "In" ? e.values!.includes(labels[e.key]) : e.operator === "NotIn" ? !e.values!.includes(labels[e.key]) : e.operator === "Exists" ? e.key in labels : !(e.key in labels),
      );
    const ipv4 = (ip: string) => ip.split(".").reduce((n, part) => n * 256 + Number(part), 0);
    const inCidr = (ip: string, cidr: string) => {
      if (cidr.includes(":") !== ip.includes(":")) return false;
      if (ip.includes(":")) return cidr === "::/0";
      const [base, bits] = cidr.split("/");
      const size = 2 ** (32 - Number(bits));
      return Math.floor(ipv4(ip) / size) === Math.floor(ipv4(base) / size);
    };
    const peerMatches = (peers: any[] | undefined, peer: Peer, policyNamespace: string) =>
      !peers?.length ||
      peers.some((p) => {
        if (p.ipBlock) return "ip" in peer && inCidr(peer.ip, p.ipBlock.cidr) && !(p.ipBlock.except ?? []).some((c: string) => inCidr(peer.ip, c));
        if (!("labels" in peer)) return false;
        const namespaceOk = p.namespaceSelector ? selects(p.namespaceSelector, { "kubernetes.io/metadata.name": peer.namespace }) : peer.namespace === policyNamespace;
        return namespaceOk && (!p.podSelector || selects(p.podSelector, peer.labels));
      });
    const portMatches = (ports: any[] | undefined, port: number, protocol: string) => !ports?.length || ports.some((p) => (p.protocol ?? "TCP") === protocol && (p.port === undefined || p.port === port));
    const direction = (of: Peer, type: "Ingress" | "Egress", other: Peer, port: number, protocol: string) => {
      if (!("labels" in of) || of.namespace !== "article-service") return true;
      const applying = policies.filter((p) => p.spec.policyTypes.includes(type) && selects(p.spec.podSelector, of.labels));
      if (!applying.length) return true;
      return applying.some((p) => (p.spec[type === "Ingress" ? "ingress" : "egress"] ?? []).some((rule: any) => portMatches(rule.ports, port, protocol) && peerMatches(type === "Ingress" ? rule.from : rule.to, other, p.metadata.namespace)));
    };
    const allowed = (from: Peer, to: Peer, port: number, protocol = "TCP") => direction(from, "Egress", to, port, protocol) && direction(to, "Ingress", from, port, protocol);
    // Connect (or HTTP), gRPC, then metrics (METRICS_PORT: the gateway's PORT + 1, a service's Connect port + 200).
    const ports = (p: Process) => (p === "gateway" ? [8080, 8180, 8081] : [7101 + SERVICES.indexOf(p as never), 7201 + SERVICES.indexOf(p as never), 7301 + SERVICES.indexOf(p as never)]);
    const connectPort = (p: Process) => ports(p)[0];

    test("the ports used here are the Deployments' own", () => {
      for (const p of PROCESSES) {
        const declared = named(objects, "Deployment", p).spec.template.spec.containers[0].ports.map((port: { containerPort: number }) => port.containerPort);
        expect(declared).toEqual(ports(p));
      }
    });

    test("every pod is isolated both ways by default", () => {
      const deny = named(objects, "NetworkPolicy", "default-deny");
      expect(deny.spec).toEqual({ podSelector: {}, policyTypes: ["Ingress", "Egress"] });
    });

    test("each process reaches exactly the services its code calls, on their Connect ports", () => {
      const calls = Object.fromEntries(PROCESSES.map((p) => [p, callsInCode(p)]));
      // What the code calls today (gateway/src/services.ts, each service's main.ts and worker).
      expect(calls).toEqual({
        gateway: ["accounts-billing", "article-store", "generation-runner", "webhook-dispatcher", "workflow-catalog"],
        "accounts-billing": [],
        "workflow-catalog": [],
        "article-store": ["accounts-billing"],
        "generation-runner": ["accounts-billing", "article-store", "workflow-catalog"],
        "webhook-dispatcher": ["accounts-billing", "article-store", "generation-runner"],
      });
      for (const from of PROCESSES)
        for (const to of PROCESSES) {
          if (from === to) continue;
          for (const port of ports(to)) {
            const expected = port === connectPort(to) && calls[from].includes(to);
            expect({ from, to, port, allowed: allowed(pod(from), pod(to), port) }).toEqual({ from, to, port, allowed: expected });
          }
        }
    });

    test("from outside, only the ingress controller reaches the gateway", () => {
      const controller = pod("ingress-nginx", "ingress-nginx");
      const elsewhere = pod("client", "default");
      expect(allowed(controller, pod("gateway"), 8080)).toBe(true);
      expect(allowed(elsewhere, pod("gateway"), 8080)).toBe(false);
      expect(allowed({ ip: "203.0.113.7" }, pod("gateway"), 8080)).toBe(false);
      for (const service of SERVICES)
        for (const port of ports(service)) {
          expect(allowed(controller, pod(service), port)).toBe(false);
          expect(allowed(elsewhere, pod(service), port)).toBe(false);
          expect(allowed({ ip: "203.0.113.7" }, pod(service), port)).toBe(false);
        }
    });

    test("an internal team's namespace labelled article-service/api-client reaches the gateway's gRPC API, and nothing else", () => {
      const team: Peer = { namespace: "team-reports", labels: { app: "reports" } };
      const labelled = (namespace: string) => ({ "kubernetes.io/metadata.name": namespace, ...(namespace === "team-reports" ? { "article-service/api-client": "true" } : {}) });
      const reaches = (port: number, to = "gateway") => {
        const policies = objects.filter((o: any) => o.kind === "NetworkPolicy" && o.spec.policyTypes.includes("Ingress") && selects(o.spec.podSelector, (pod(to) as { labels: Record<string, string> }).labels));
        return policies.some((p: any) => (p.spec.ingress ?? []).some((rule: any) => portMatches(rule.ports, port, "TCP") && (rule.from ?? []).some((f: any) => f.namespaceSelector && !f.podSelector && selects(f.namespaceSelector, labelled(team.namespace)))));
      };
      expect(reaches(8180)).toBe(true);
      expect(reaches(8080)).toBe(false);
      expect(reaches(8081)).toBe(false);
      for (const service of SERVICES) for (const port of ports(service)) expect(reaches(port, service)).toBe(false);
      expect(allowed(pod("client", "default"), pod("gateway"), 8180)).toBe(false);
    });

    test("operator pods reach every service's Connect and gRPC ports", () => {
      const operator: Peer = { namespace: "article-service", labels: { "app.kubernetes.io/component": "operator" } };
      for (const service of SERVICES) for (const port of ports(service).slice(0, 2)) expect(allowed(operator, pod(service), port)).toBe(true);
      expect(allowed(pod("client", "default"), pod("accounts-billing"), 7201)).toBe(false);
    });

    test("Prometheus in the monitoring namespace scrapes every process's metrics port, and nothing else", () => {
      const prometheus = pod("prometheus", "monitoring");
      for (const p of PROCESSES) {
        const [main, ...rest] = ports(p);
        expect(allowed(prometheus, pod(p), rest[rest.length - 1]!)).toBe(true);
        expect(allowed(prometheus, pod(p), main!)).toBe(false);
      }
    });

    test("every process exports traces to the collector in the observability namespace, on OTLP/HTTP only", () => {
      const collector = pod("otel-collector", "observability");
      for (const p of PROCESSES) {
        expect(allowed(pod(p), collector, 4318)).toBe(true);
        expect(allowed(pod(p), collector, 4317)).toBe(false);
        expect(allowed(pod(p), pod("otel-collector", "default"), 4318)).toBe(false);
      }
    });

    test("DNS for all; Postgres, Redis and the internet only for those that use them", () => {
      const postgresUsers = SERVICES;
      // accounts-billing writes plans' weights for the runners' turns (kit/src/plan-weights.ts).
      const redisUsers = ["gateway", "accounts-billing", "article-store", "generation-runner", "webhook-dispatcher"];
      const internetUsers = ["generation-runner", "webhook-dispatcher"];
      const dns = pod("coredns", "kube-system");
      for (const p of PROCESSES) {
        expect(allowed(pod(p), dns, 53, "UDP")).toBe(true);
        expect(allowed(pod(p), dns, 53, "TCP")).toBe(true);
        expect(allowed(pod(p), pod("postgres", "databases"), 5432)).toBe((postgresUsers as readonly string[]).includes(p));
        expect(allowed(pod(p), pod("postgres"), 5432)).toBe((postgresUsers as readonly string[]).includes(p));
        expect(allowed(pod(p), pod("redis"), 6379)).toBe(redisUsers.includes(p));
        expect(allowed(pod(p), { ip: "203.0.113.7" }, 443)).toBe(internetUsers.includes(p));
        // The cloud metadata endpoint and private addresses stay out of reach.
        expect(allowed(pod(p), { ip: "169.254.169.254" }, 80)).toBe(false);
        expect(allowed(pod(p), { ip: "10.1.2.3" }, 443)).toBe(false);
      }
      expect(allowed(pod("keda-operator", "keda"), pod("redis"), 6379)).toBe(true);
    });
  });
});

test("the image gives every process the engine settings npm start gives them", () => {
  const dockerfile = readFileSync(join(ROOT, "deploy/container/Dockerfile"), "utf8");
  for (const [name, value] of Object.entries(RUNTIME_START_ENV)) expect(dockerfile).toMatch(new RegExp(`^ENV ${name}=${value}$`, "m"));
});

describe("autoscaling (production)", () => {
  const objects = rendered["overlays/production"];
  const config = named(objects, "ConfigMap", "article-service-config").data;

  test("generation-runner scales on the articles waiting in the accounts' lines and its active jobs, webhook-dispatcher on its queue's waiting and active lists", () => {
    const prefix = queuePrefix(config.REDIS_PREFIX, false);
    const expected: Record<string, string> = { "generation-runner": QUEUES.generation.name, "webhook-dispatcher": QUEUES.webhooks.name };
    const scaled = ofKind(objects, "ScaledObject");
    expect(scaled.map((s) => s.spec.scaleTargetRef.name).sort()).toEqual(Object.keys(expected).sort());
    const redisHost = new URL(config.REDIS_URL).host;
    for (const s of scaled) {
      const queue = expected[s.spec.scaleTargetRef.name];
      expect(named(objects, "Deployment", s.spec.scaleTargetRef.name)).toBeDefined();
      expect(s.spec.minReplicaCount).toBeGreaterThanOrEqual(2);
      expect(s.spec.maxReplicaCount).toBeGreaterThan(s.spec.minReplicaCount);
      // New articles wait for a runner's slot in their accounts' lines (counted in fair:waiting); webhooks in BullMQ's waiting list.
      const waiting = queue === QUEUES.generation.name ? "fair:waiting" : "wait";
      expect(s.spec.triggers.map((t: any) => t.metadata.listName).sort()).toEqual([`${prefix}:${queue}:active`, `${prefix}:${queue}:${waiting}`]);
      for (const t of s.spec.triggers) {
        expect(t.type).toBe("redis");
        expect(Number(t.metadata.listLength)).toBeGreaterThan(0);
        // The same Redis as the ConfigMap's, named from KEDA's namespace.
        expect(t.metadata.address).toBe(`${redisHost.split(":")[0]}.article-service.svc.cluster.local:${redisHost.split(":")[1] ?? "6379"}`);
      }
    }
  });

  test("the gateway scales on CPU, and autoscaled Deployments carry no replica count to reset", () => {
    const [hpa] = ofKind(objects, "HorizontalPodAutoscaler");
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: "apps/v1", kind: "Deployment", name: "gateway" });
    expect(hpa.spec.metrics).toEqual([{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 70 } } }]);
    for (const name of ["gateway", "generation-runner", "webhook-dispatcher"]) expect(named(objects, "Deployment", name).spec.replicas).toBeUndefined();
    for (const name of ["accounts-billing", "workflow-catalog", "article-store"]) expect(named(objects, "Deployment", name).spec.replicas).toBeGreaterThanOrEqual(2);
    expect(named(objects, "Deployment", "gateway").spec.template.spec.containers[0].image).toMatch(/^registry\.example\.com\/article-service@sha256:\S+$/);
  });

  test("the local overlay needs no KEDA or metrics-server and runs one replica of each", () => {
    const local = rendered["overlays/local"];
    expect(ofKind(local, "ScaledObject").length + ofKind(local, "HorizontalPodAutoscaler").length).toBe(0);
    for (const d of ofKind(local, "Deployment")) expect(d.spec.replicas).toBe(1);
  });
});

describe("the strict validation itself", () => {
  test("refuses an unknown field, a wrong type and a ScaledObject without its target", () => {
    const deployment = structuredClone(named(rendered.base, "Deployment", "gateway"));
    deployment.spec.template.spec.containers[0].securityContext.runAsNonroot = true;
    expect(validateStrictly(deployment)).toEqual([".spec.template.spec.containers.0.securityContext.runAsNonroot"]);
    deployment.spec.replicas = "2";
    expect(() => validateStrictly(deployment)).toThrow(/replicas must be integer/);
    const scaled = structuredClone(named(rendered["overlays/production"], "ScaledObject", "generation-runner"));
    delete scaled.spec.scaleTargetRef;
    expect(() => validateStrictly(scaled)).toThrow(/scaleTargetRef/);
  });
});

describe("migrations once per release", () => {
  test.each(SETUPS)("%s: the migration Job migrates every service's schema with the database Secret alone, and the services only verify theirs", (setup) => {
    const objects = rendered[setup];
    const job = objects.find((o) => o.kind === "Job" && o.metadata.name === "migrate")!;
    const pod = (job.spec as any).template.spec;
    const containers = [...pod.initContainers, ...pod.containers];
    expect(containers.map((c: any) => c.args)).toEqual(SERVICES.map((s) => [`services/${s}/src/main.bundle.js`, "--migrate"]));
    for (const c of containers) expect(c.envFrom.map((f: any) => f.secretRef?.name).filter(Boolean)).toEqual(["article-service-database"]);
    expect(pod.automountServiceAccountToken).toBe(false);
    const config = objects.find((o) => o.kind === "ConfigMap" && o.metadata.name === "article-service-config")!.data as Record<string, string>;
    expect(config.MIGRATIONS).toBe("verify");
    // Its pod may reach Postgres (default-deny egress otherwise).
    const postgres = objects.find((o) => o.kind === "NetworkPolicy" && o.metadata.name === "allow-postgres")!;
    expect((postgres.spec as any).podSelector.matchExpressions[0].values).toContain("migrate");
  });
});
