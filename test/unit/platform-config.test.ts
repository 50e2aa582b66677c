// What every service reads at start (services/kit/src/config.ts), and what the Kubernetes
// manifests (deploy/k8s) give each process of it: an identity of its own (its ServiceAccount's
// projected token, checked against the cluster's keys), only the Secrets whose keys it reads, and
// an environment its configuration loader accepts once the Secrets' placeholders are replaced.
import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { stringify } from "yaml";
import { renderKustomization, type K8sObject } from "../../deploy/k8s/render.ts";
import { loadGatewayConfig } from "../../gateway/src/config.ts";
import { loadRunnerConfig } from "../../services/generation-runner/src/config.ts";
import { CALLERS } from "../../services/kit/src/access-policy.ts";
import { ConfigError, loadPlatformConfig } from "../../services/kit/src/config.ts";
import { DEFAULT_AUDIENCE } from "../../services/kit/src/workload-identity.ts";
import { loadDispatcherSettings } from "../../services/webhook-dispatcher/src/config.ts";

const identity = { IDENTITY_TOKEN_FILE: "/run/identity/token", IDENTITY_JWKS: "/run/identity/jwks.json", IDENTITY_ISSUER: "https://issuer.test" };
const base = { ...identity };

describe("DATABASE_POOL_SIZE", () => {
  test("a service process holds at most 10 connections unless told otherwise", () => {
    expect(loadPlatformConfig(base).databasePoolSize).toBe(10);
    expect(loadPlatformConfig({ ...base, DATABASE_POOL_SIZE: "3" }).databasePoolSize).toBe(3);
  });

  test.each(["0", "101", "many", "2.5"])("%p is refused with the variable named", (value) => {
    expect(() => loadPlatformConfig({ ...base, DATABASE_POOL_SIZE: value })).toThrow(ConfigError);
    expect(() => loadPlatformConfig({ ...base, DATABASE_POOL_SIZE: value })).toThrow(/DATABASE_POOL_SIZE/);
  });
});

describe("workload identity settings", () => {
  test.each(Object.keys(identity))("without %s a service does not start, and says which variable is missing", (name) => {
    const env: Record<string, string> = { ...identity };
    delete env[name];
    expect(() => loadPlatformConfig(env)).toThrow(new RegExp(`^${name}: required`));
  });
});

// ---- The manifests -----------------------------------------------------------------------------

const ROOT = join(import.meta.dir, "../..");
const K8S = join(ROOT, "deploy/k8s");
const SETUPS = ["base", "overlays/local", "overlays/production"] as const;
const rendered = Object.fromEntries(SETUPS.map((dir) => [dir, renderKustomization(join(K8S, dir))])) as Record<(typeof SETUPS)[number], K8sObject[]>;

const PROCESSES = ["gateway", "accounts-billing", "workflow-catalog", "article-store", "generation-runner", "webhook-dispatcher"] as const;
type Process = (typeof PROCESSES)[number];
const SERVICES = PROCESSES.filter((p) => p !== "gateway");

/**
 * Who reads each key the Secrets hold, written by hand from the code: DATABASE_URL through
 * loadPlatformConfig (services/kit/src/config.ts, every service's start; the gateway has no
 * database), WEBHOOK_SECRET_KEY in webhook-dispatcher's config.ts, the provider, search and bucket
 * credentials in generation-runner's config.ts and domain/providers.ts.
 */
const READERS: Record<string, readonly Process[]> = {
  DATABASE_URL: SERVICES,
  WEBHOOK_SECRET_KEY: ["webhook-dispatcher"],
  OPENAI_API_KEY: ["generation-runner"],
  BRAVE_API_KEY: ["generation-runner"],
  S3_ACCESS_KEY_ID: ["generation-runner"],
  S3_SECRET_ACCESS_KEY: ["generation-runner"],
  S3_SESSION_TOKEN: ["generation-runner"],
  SMTP_URL: ["accounts-billing"],
};

const IDENTITY_AUDIENCE = "article-service";
const KUBERNETES_JWKS = "https://kubernetes.default.svc/openid/v1/jwks";

const ofKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind) as any[];
const named = (objects: K8sObject[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name) as any;
const containerOf = (d: any) => d.spec.template.spec.containers.find((c: any) => c.name === d.metadata.name);
const envOf = (container: any): Record<string, string> => Object.fromEntries((container.env ?? []).map((e: { name: string; value?: string }) => [e.name, e.value ?? ""]));
const secretData = (secret: any): Record<string, string> => ({
  ...Object.fromEntries(Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(String(v), "base64").toString()])),
  ...(secret.stringData ?? {}),
});

/** The Secrets a Deployment's pods can read: by envFrom, env valueFrom, or a volume. */
function secretsOf(d: any): string[] {
  const pod = d.spec.template.spec;
  const names = new Set<string>();
  for (const c of [...pod.containers, ...(pod.initContainers ?? [])]) {
    for (const from of c.envFrom ?? []) if (from.secretRef) names.add(from.secretRef.name);
    for (const e of c.env ?? []) if (e.valueFrom?.secretKeyRef) names.add(e.valueFrom.secretKeyRef.name);
  }
  for (const v of pod.volumes ?? []) {
    if (v.secret) names.add(v.secret.secretName);
    for (const source of v.projected?.sources ?? []) if (source.secret) names.add(source.secret.name);
  }
  return [...names].sort();
}

/**
 * The environment a process starts with: the ConfigMap and Secrets it takes whole (envFrom, in
 * order), then its own env; `replace` stands for what an operator puts in place of a placeholder.
 */
function processEnv(objects: K8sObject[], d: any, replace: Record<string, string> = {}): Record<string, string> {
  const container = containerOf(d);
  const env: Record<string, string> = {};
  for (const from of container.envFrom ?? []) {
    if (from.configMapRef) Object.assign(env, named(objects, "ConfigMap", from.configMapRef.name).data);
    if (from.secretRef) Object.assign(env, secretData(named(objects, "Secret", from.secretRef.name)));
  }
  Object.assign(env, envOf(container));
  for (const [key, value] of Object.entries(replace)) if (key in env) env[key] = value;
  return env;
}

describe.each(SETUPS)("deploy/k8s/%s", (setup) => {
  const objects = rendered[setup];
  const deployments = ofKind(objects, "Deployment");
  const config = named(objects, "ConfigMap", "article-service-config").data as Record<string, string>;

  test("each process runs as a ServiceAccount of its own, named as the services' access tables name it", () => {
    const callers = Object.values(CALLERS).filter((c) => c !== CALLERS.operator).sort();
    expect(deployments.map((d) => d.metadata.name).sort()).toEqual(callers);
    for (const d of deployments) {
      expect({ deployment: d.metadata.name, serviceAccount: d.spec.template.spec.serviceAccountName }).toEqual({ deployment: d.metadata.name, serviceAccount: d.metadata.name });
    }
    // The operator's account has no Deployment: the operator CLI takes a token of it.
    const accounts = ofKind(objects, "ServiceAccount");
    expect(accounts.map((a) => a.metadata.name).sort()).toEqual([...callers, CALLERS.operator].sort());
    for (const a of accounts) expect({ account: a.metadata.name, automount: a.automountServiceAccountToken }).toEqual({ account: a.metadata.name, automount: false });
  });

  test("no pod gets the default API token; its identity is a projected token for article-service, and IDENTITY_TOKEN_FILE names it", () => {
    expect(DEFAULT_AUDIENCE).toBe(IDENTITY_AUDIENCE);
    for (const d of deployments) {
      const pod = d.spec.template.spec;
      const container = containerOf(d);
      const env = envOf(container);
      expect({ deployment: d.metadata.name, automount: pod.automountServiceAccountToken }).toEqual({ deployment: d.metadata.name, automount: false });
      // Which file of which mounted projected volume a path names.
      const fileAt = (path: string) => {
        const mount = container.volumeMounts.find((m: any) => path.startsWith(`${m.mountPath}/`));
        const volume = mount && pod.volumes.find((v: any) => v.name === mount.name);
        const file = mount && path.slice(mount.mountPath.length + 1);
        return { mount, volume, source: volume?.projected?.sources?.find((s: any) => s.serviceAccountToken?.path === file || s.configMap?.items?.some((i: any) => i.path === file)) };
      };
      const own = fileAt(env.IDENTITY_TOKEN_FILE ?? "");
      expect({ deployment: d.metadata.name, token: own.source?.serviceAccountToken }).toEqual({
        deployment: d.metadata.name,
        token: { path: "token", audience: IDENTITY_AUDIENCE, expirationSeconds: 3600 },
      });
      expect(own.mount.readOnly).toBe(true);
      // The API server's keys are read with a token for the API server itself (no audience) and its CA.
      const apiToken = fileAt(env.IDENTITY_JWKS_TOKEN_FILE ?? "");
      expect(apiToken.volume?.name).toBe(own.volume.name);
      expect(apiToken.source?.serviceAccountToken?.audience).toBeUndefined();
      expect(apiToken.source?.serviceAccountToken?.expirationSeconds).toBeGreaterThanOrEqual(600);
      const ca = fileAt(env.IDENTITY_JWKS_CA_FILE ?? "");
      expect(ca.volume?.name).toBe(own.volume.name);
      expect(ca.source?.configMap).toEqual({ name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] });
      // No other way to a ServiceAccount token.
      const tokenVolumes = pod.volumes.filter((v: any) => v.projected?.sources?.some((s: any) => s.serviceAccountToken));
      expect(tokenVolumes.map((v: any) => v.name)).toEqual([own.volume.name]);
    }
  });

  test("the ConfigMap names the cluster's keys, an https issuer, the tokens' audience and the manifests' namespace", () => {
    expect(config.IDENTITY_JWKS).toBe(KUBERNETES_JWKS);
    expect(new URL(config.IDENTITY_ISSUER!).protocol).toBe("https:");
    expect(config.IDENTITY_AUDIENCE).toBe(IDENTITY_AUDIENCE);
    const [namespace] = ofKind(objects, "Namespace");
    expect(config.IDENTITY_NAMESPACE).toBe(namespace.metadata.name);
    for (const o of objects.filter((o) => o.kind !== "Namespace")) expect(o.metadata.namespace).toBe(config.IDENTITY_NAMESPACE);
  });

  test("the processes reach the API server's keys: every pod has an egress policy for it", () => {
    const policy = named(objects, "NetworkPolicy", "allow-kube-apiserver");
    const selected = policy.spec.podSelector.matchExpressions[0].values;
    expect([...selected].sort()).toEqual([...PROCESSES].sort());
    expect(policy.spec.policyTypes).toEqual(["Egress"]);
    expect(policy.spec.egress.every((rule: any) => rule.to?.length && rule.to.every((peer: any) => peer.ipBlock?.cidr) && rule.ports?.length)).toBe(true);
  });

  test("a Secret reaches only the processes that read its keys, and each process every key it reads", () => {
    const secrets = ofKind(objects, "Secret");
    const keysOf = (name: string) => {
      const secret = secrets.find((s) => s.metadata.name === name);
      expect({ secret: name, shipped: secret !== undefined }).toEqual({ secret: name, shipped: true });
      return Object.keys(secretData(secret));
    };
    for (const secret of secrets) for (const key of Object.keys(secretData(secret))) expect({ secret: secret.metadata.name, key, known: key in READERS }).toEqual({ secret: secret.metadata.name, key, known: true });
    const shippedKeys = new Set(secrets.flatMap((s) => Object.keys(secretData(s))));
    for (const d of deployments) {
      const name = d.metadata.name as Process;
      const given = secretsOf(d);
      // Each Secret it gets holds only keys it reads.
      for (const secret of given) for (const key of keysOf(secret)) expect({ process: name, secret, key, reads: READERS[key]?.includes(name) }).toEqual({ process: name, secret, key, reads: true });
      // And every shipped key it reads comes to it.
      const reaching = new Set(given.flatMap(keysOf));
      const missing = [...shippedKeys].filter((key) => READERS[key]!.includes(name) && !reaching.has(key));
      expect({ process: name, missing }).toEqual({ process: name, missing: [] });
    }
    // Each Secret is for someone.
    for (const secret of secrets) expect({ secret: secret.metadata.name, used: deployments.some((d) => secretsOf(d).includes(secret.metadata.name)) }).toEqual({ secret: secret.metadata.name, used: true });
    expect(secretsOf(named(objects, "Deployment", "gateway"))).toEqual([]);
  });

  test("DATABASE_URL is in no ConfigMap, and no credential is in the ConfigMap", () => {
    for (const c of ofKind(objects, "ConfigMap")) for (const key of Object.keys(READERS)) expect({ configMap: c.metadata.name, key, present: key in (c.data ?? {}) }).toEqual({ configMap: c.metadata.name, key, present: false });
    for (const d of deployments) for (const key of Object.keys(READERS)) expect({ process: d.metadata.name, key, inline: key in envOf(containerOf(d)) }).toEqual({ process: d.metadata.name, key, inline: false });
  });

  test("SERVICE_TOKEN appears nowhere", () => {
    expect(objects.map((o) => stringify(o)).join("\n")).not.toContain("SERVICE_TOKEN");
  });

  test("the Secrets' placeholders stop the processes that read them, with the variable named", () => {
    for (const d of deployments.filter((d) => d.metadata.name !== "gateway")) {
      expect(() => loadPlatformConfig(processEnv(objects, d))).toThrow(/^DATABASE_URL: its password is a placeholder/);
    }
    const dispatcher = named(objects, "Deployment", "webhook-dispatcher");
    const env = processEnv(objects, dispatcher, { DATABASE_URL: "postgres://articles:Zq8vT3mW9pLx2RkN7cYb@postgres:5432/articles" });
    expect(() => loadDispatcherSettings(env)).toThrow(/^WEBHOOK_SECRET_KEY: a placeholder/);
  });

  test("with the placeholders replaced, every process's configuration loads from what its manifest gives it", () => {
    const real = { DATABASE_URL: "postgres://articles:Zq8vT3mW9pLx2RkN7cYb@postgres:5432/articles", WEBHOOK_SECRET_KEY: randomBytes(32).toString("base64") };
    for (const d of deployments) {
      const env = processEnv(objects, d, real);
      const name = d.metadata.name as Process;
      if (name === "gateway") {
        const gateway = loadGatewayConfig(env);
        expect(gateway.identity).toMatchObject({ tokenFile: env.IDENTITY_TOKEN_FILE, jwks: KUBERNETES_JWKS, audience: IDENTITY_AUDIENCE, namespace: config.IDENTITY_NAMESPACE });
        expect(gateway.actingWorkloads.size).toBe(0);
        continue;
      }
      const platform = loadPlatformConfig(env);
      expect(platform.identity).toMatchObject({ tokenFile: env.IDENTITY_TOKEN_FILE, jwks: KUBERNETES_JWKS, jwksTokenFile: env.IDENTITY_JWKS_TOKEN_FILE, jwksCaFile: env.IDENTITY_JWKS_CA_FILE, issuer: config.IDENTITY_ISSUER });
      if (name === "webhook-dispatcher") expect(loadDispatcherSettings(env).secretKey.length).toBe(32);
      if (name === "generation-runner") expect(loadRunnerConfig(env).imageBucket).toBeUndefined();
    }
  });
});

test("the readers written above are the code's: which process's source names each key", () => {
  const sourceOf = (dir: string): string => {
    let text = "";
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) text += sourceOf(path);
      else if (name.endsWith(".ts") && !name.endsWith(".test.ts")) text += readFileSync(path, "utf8");
    }
    return text;
  };
  const sources = Object.fromEntries(PROCESSES.map((p) => [p, sourceOf(join(ROOT, p === "gateway" ? "gateway/src" : `services/${p}/src`))])) as Record<Process, string>;
  const kit = sourceOf(join(ROOT, "services/kit/src"));
  // Every service starts through runService, which loads the platform config; the gateway does not.
  for (const service of SERVICES) expect(sources[service]).toContain("runService(");
  expect(kit).toMatch(/runService[\s\S]*loadPlatformConfig\(/);
  expect(sources.gateway).not.toContain("loadPlatformConfig");
  for (const [key, readers] of Object.entries(READERS)) {
    const inCode = PROCESSES.filter((p) => sources[p].includes(`"${key}"`) || sources[p].includes(`env.${key}`) || (SERVICES as readonly string[]).includes(p) && kit.includes(`"${key}"`));
    expect({ key, readers: inCode }).toEqual({ key, readers: [...readers] });
  }
});

test("SERVICE_TOKEN is named in no file under deploy/k8s", () => {
  const files = (dir: string): string[] => readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? files(join(dir, name)) : [join(dir, name)]));
  expect(files(K8S).filter((file) => readFileSync(file, "utf8").includes("SERVICE_TOKEN")).map((file) => relative(ROOT, file))).toEqual([]);
});

describe("the production overlay's TLS patch (grpc-tls.yaml), enabled", () => {
  // A kustomization of the production overlay plus the patch, as enabling it in kustomization.yaml does.
  const dir = mkdtempSync(join(tmpdir(), "grpc-tls-"));
  const production = join(K8S, "overlays/production");
  writeFileSync(join(dir, "kustomization.yaml"), stringify({ resources: [production], patches: [{ path: relative(dir, join(production, "grpc-tls.yaml")) }] }));
  const objects = renderKustomization(dir);
  const production_kustomization = readFileSync(join(production, "kustomization.yaml"), "utf8");

  test("is offered, off by default, in the production overlay", () => {
    expect(production_kustomization).toMatch(/^ {2}# - path: grpc-tls\.yaml$/m);
  });

  test("each process serves with its own certificate's files and trusts the CA for the https addresses", () => {
    const config = named(objects, "ConfigMap", "article-service-config").data;
    for (const variable of ["ACCOUNTS_BILLING_URL", "WORKFLOW_CATALOG_URL", "ARTICLE_STORE_URL", "GENERATION_RUNNER_URL", "WEBHOOK_DISPATCHER_URL"]) expect(config[variable]).toMatch(/^https:\/\//);
    for (const d of ofKind(objects, "Deployment")) {
      const container = containerOf(d);
      const env = envOf(container);
      const tls = d.spec.template.spec.volumes.find((v: any) => v.secret?.secretName === `${d.metadata.name}-tls`);
      expect({ deployment: d.metadata.name, tls: tls !== undefined }).toEqual({ deployment: d.metadata.name, tls: true });
      const mount = container.volumeMounts.find((m: any) => m.name === tls.name);
      expect(mount.readOnly).toBe(true);
      expect([env.TLS_CERT_FILE, env.TLS_KEY_FILE, env.TLS_CA_FILE]).toEqual(["tls.crt", "tls.key", "ca.crt"].map((file) => `${mount.mountPath}/${file}`));
      // The identity and the secrets stay as they were.
      expect(secretsOf(d)).toEqual([...secretsOf(named(rendered["overlays/production"], "Deployment", d.metadata.name)), `${d.metadata.name}-tls`].sort());
    }
  });

  test("the services' probes ask the same health checks over TLS, since the kubelet's gRPC probes cannot", () => {
    for (const d of ofKind(objects, "Deployment").filter((d) => d.metadata.name !== "gateway")) {
      const container = containerOf(d);
      const grpc = Number(envOf(container).GRPC_PORT);
      for (const [probe, service] of [["startupProbe", "liveness"], ["readinessProbe", undefined], ["livenessProbe", "liveness"]] as const) {
        expect(container[probe].grpc).toBeUndefined();
        expect(container[probe].exec.command).toEqual(["/app/node_modules/.bin/bun", "deploy/k8s/grpc-health-probe.ts", String(grpc), ...(service ? [service] : [])]);
      }
    }
  });
});
