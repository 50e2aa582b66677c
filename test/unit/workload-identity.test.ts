// Workload identity and the caller check, on a real service server of the kit with the launcher's
// keys: who a token names, what it takes for a token to be refused (each refusal UNAUTHENTICATED
// and one log line saying why, never holding the token), where the keys may come from, a key
// rotation with both keys valid for a while, and the access table with an operator's grant.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { ModelCatalogService } from "../../proto/gen/articles/generation_runner/v1/models_pb.ts";
import { allow, CALLERS, loadCallerGrants } from "../../services/kit/src/access-policy.ts";
import { serviceClient } from "../../services/kit/src/clients.ts";
import { ConfigError } from "../../services/kit/src/config.ts";
import { createLogger } from "../../services/kit/src/logger.ts";
import { registry } from "../../services/kit/src/metrics.ts";
import { startServiceServer, type ServiceServer } from "../../services/kit/src/server.ts";
import { CallerVerifier, callerOfSubject, fixedCredential, loadIdentitySettings } from "../../services/kit/src/workload-identity.ts";
import { LOCAL_ISSUER, prepareWorkloadTokens } from "../../deploy/local/workload-tokens.ts";
import { generateKeyPair, SignJWT, type JWK, type JWTPayload } from "jose";
import { testIdentity, type TestIdentity } from "../harness/identity.ts";

let identity: TestIdentity;
let server: ServiceServer;
let baseUrl: string;

beforeAll(async () => {
  identity = await testIdentity();
  server = await startServiceServer({
    name: "identity-test",
    port: 0,
    grpcPort: 0,
    host: "127.0.0.1",
    verifier: identity.verifier,
    access: [allow(ModelCatalogService, { resolveModel: [CALLERS.gateway], listModels: [CALLERS.gateway, CALLERS.operator], addModel: [CALLERS.operator], updateModel: [] })],
    grants: loadCallerGrants({ CALLER_GRANTS: "reporting/exporter=articles.generation_runner.v1.ModelCatalogService/ListModels" }),
    logger: createLogger("identity-test"),
    routes: (router) =>
      router.service(ModelCatalogService, {
        resolveModel: () => ({ model: { id: "openai:cheapest" } }),
        listModels: () => ({ models: [] }),
        addModel: () => ({}),
        updateModel: () => ({}),
      }),
  });
  baseUrl = `http://127.0.0.1:${server.port}`;
});

afterAll(async () => {
  await server.drain(0);
  identity.remove();
});

const catalogWith = (token: string) => serviceClient(ModelCatalogService, { baseUrl, credential: fixedCredential(token) });
const codeOf = (call: Promise<unknown>) => call.then(() => "ok", (error: ConnectError) => Code[error.code]);

describe("callers' names", () => {
  test("a ServiceAccount of the stack's namespace is named alone; another namespace's with it", () => {
    expect(callerOfSubject("system:serviceaccount:article-service:gateway", "article-service")).toBe("gateway");
    expect(callerOfSubject("system:serviceaccount:reporting:exporter", "article-service")).toBe("reporting/exporter");
    expect(callerOfSubject("system:node:worker-1", "article-service")).toBeUndefined();
    expect(callerOfSubject("system:serviceaccount:Bad_NS:x", "article-service")).toBeUndefined();
  });
});

/** Claims of a good token for `sub`, as the launcher signs them, with `changes` over them (undefined drops one). */
function claims(changes: Partial<Record<keyof JWTPayload, unknown>> = {}): JWTPayload {
  const now = Math.floor(Date.now() / 1000);
  const all: Record<string, unknown> = { iss: LOCAL_ISSUER, aud: "article-service", sub: "system:serviceaccount:article-service:gateway", iat: now, nbf: now, exp: now + 3600, ...changes };
  return Object.fromEntries(Object.entries(all).filter(([, v]) => v !== undefined));
}

/** The launcher's published key (public half): what a forger has. */
const publishedKey = (): JWK => JSON.parse(readFileSync(identity.settings.jwks, "utf8")).keys.at(-1);
const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");

/** A call with the token is UNAUTHENTICATED, logged once with `reason`, the token in no line. */
async function expectRefused(token: string, reason: RegExp) {
  const before = identity.logged.length;
  expect(await codeOf(catalogWith(token).resolveModel({}))).toBe("Unauthenticated");
  const lines = identity.logged.slice(before);
  expect(lines).toHaveLength(1);
  expect(JSON.parse(lines[0]!)).toMatchObject({ message: "workload credential refused", reason: expect.stringMatching(reason) });
  if (token) expect(lines[0]).not.toContain(token.split(".")[1] ?? token);
}

describe("a token is refused", () => {
  const unsigned = (header: object, payload: object) => `${base64url(header)}.${base64url(payload)}.`;
  const cases: [string, () => Promise<string>, RegExp][] = [
    ["missing", async () => "", /no workload credential/],
    ["not a JWT", async () => "not-a-token", /not a signed token/],
    ["expired", () => identity.tokens.mint("gateway", { lifetimeSeconds: -120 }), /expired/],
    ["for another audience", () => identity.tokens.mint("gateway", { audience: "some-other-system" }), /another audience/],
    ["from another issuer", () => identity.tokens.sign(claims({ iss: "https://issuer.example.com" })), /another issuer/],
    ["without exp", () => identity.tokens.sign(claims({ exp: undefined })), /carries no exp/],
    ["without iat", () => identity.tokens.sign(claims({ iat: undefined })), /carries no iat/],
    ["valid for 100 years", () => identity.tokens.sign(claims({ exp: Math.floor(Date.now() / 1000) + 100 * 365 * 86_400 })), /lifetime .* longer than IDENTITY_TOKEN_MAX_SECONDS \(3600 s\)/],
    ["valid for two hours, past the default maximum of one", () => identity.tokens.sign(claims({ exp: Math.floor(Date.now() / 1000) + 7200 })), /lifetime \(exp - iat\) is 7200 s, longer than IDENTITY_TOKEN_MAX_SECONDS \(3600 s\)/],
    ["a second over the maximum lifetime", () => identity.tokens.sign(claims({ exp: Math.floor(Date.now() / 1000) + 86_401 })), /lifetime \(exp - iat\) is 86401 s/],
    ["issued in the future (a short lifetime that starts in years)", () => identity.tokens.sign(claims({ iat: Math.floor(Date.now() / 1000) + 10 * 365 * 86_400, nbf: undefined, exp: Math.floor(Date.now() / 1000) + 10 * 365 * 86_400 + 60 })), /issued in the future/],
    ["not valid yet (nbf in an hour)", () => identity.tokens.sign(claims({ nbf: Math.floor(Date.now() / 1000) + 3600 })), /not valid yet \(nbf/],
    ["unsigned (alg none)", async () => unsigned({ alg: "none", kid: publishedKey().kid, typ: "JWT" }, claims()), /algorithm none is not/],
    ["HS256 keyed with the published public key", async () => {
      const key = publishedKey();
      return new SignJWT(claims()).setProtectedHeader({ alg: "HS256", kid: key.kid }).sign(new TextEncoder().encode(JSON.stringify(key)));
    }, /algorithm HS256 is not/],
    ["signed with another algorithm under the published key's id (ES384 for an ES256 key)", async () => {
      const { privateKey } = await generateKeyPair("ES384");
      return new SignJWT(claims()).setProtectedHeader({ alg: "ES384", kid: publishedKey().kid }).sign(privateKey);
    }, /algorithm ES384 is not its key's \(ES256\)/],
    ["signed by a key never published (another launcher's), even after the keys are read again", async () => {
      const dir = mkdtempSync(join(tmpdir(), "stranger-"));
      const stranger = await prepareWorkloadTokens(dir);
      try {
        return await stranger.mint("gateway");
      } finally {
        stranger.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    }, /is not published, even after reading the keys again/],
  ];
  test.each(cases)("%s", async (_, token, reason) => expectRefused(await token(), reason));

  test("the launcher's own tokens pass: iat and exp, a lifetime of the maximum (an hour) and no more", async () => {
    const token = await identity.tokens.mint("gateway");
    const [, payload] = token.split(".");
    const { iat, exp } = JSON.parse(Buffer.from(payload!, "base64url").toString());
    expect(exp - iat).toBe(3600);
    expect(await codeOf(catalogWith(token).resolveModel({}))).toBe("ok");
  });

  test("IDENTITY_TOKEN_MAX_SECONDS sets the maximum: lowered, the launcher's hour-long token is refused; raised, a day-long one passes", async () => {
    const logged: string[] = [];
    const log = { warn: (message: string, fields?: Record<string, unknown>) => logged.push(JSON.stringify({ message, ...fields })) };
    const strict = new CallerVerifier({ ...identity.settings, maxLifetimeSeconds: 600 }, log);
    const refused = await strict.callerOf(`Bearer ${await identity.tokens.mint("gateway")}`).catch((e: ConnectError) => e);
    expect((refused as ConnectError).code).toBe(Code.Unauthenticated);
    expect(logged.join("\n")).toContain("longer than IDENTITY_TOKEN_MAX_SECONDS (600 s)");
    expect(await strict.callerOf(`Bearer ${await identity.tokens.mint("gateway", { lifetimeSeconds: 600 })}`)).toBe("gateway");
    const dayLong = await identity.tokens.mint("gateway", { lifetimeSeconds: 86_400 });
    expect(await identity.verifier.callerOf(`Bearer ${dayLong}`).catch((e: ConnectError) => e.code)).toBe(Code.Unauthenticated);
    expect(await new CallerVerifier({ ...identity.settings, maxLifetimeSeconds: 86_400 }, log).callerOf(`Bearer ${dayLong}`)).toBe("gateway");
  });

  test("health needs no token: probes carry none", async () => {
    const health = await fetch(`${baseUrl}/grpc.health.v1.Health/Check`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(health.status).toBe(200);
  });
});

describe("the access table", () => {
  test("a caller the table does not name is PERMISSION_DENIED naming caller and method, logged and counted", async () => {
    const runner = catalogWith(await identity.tokens.mint("generation-runner"));
    const error = (await runner.addModel({}).catch((e: ConnectError) => e)) as ConnectError;
    expect(error).toBeInstanceOf(ConnectError);
    expect(error.code).toBe(Code.PermissionDenied);
    expect(error.rawMessage).toBe('caller "generation-runner" may not call articles.generation_runner.v1.ModelCatalogService/AddModel');
    const metrics = await registry.metrics();
    expect(metrics).toMatch(/rpc_server_refused_total\{[^}]*caller="generation-runner"[^}]*rpc_method="articles.generation_runner.v1.ModelCatalogService\/AddModel"[^}]*\} 1/);
  });

  test("a method whose entry names no caller is refused to everyone, the operator included", async () => {
    expect(await codeOf(catalogWith(await identity.tokens.mint("operator")).updateModel({}))).toBe("PermissionDenied");
    expect(await codeOf(catalogWith(await identity.tokens.mint("gateway")).updateModel({}))).toBe("PermissionDenied");
  });

  test("an operator's grant opens exactly the granted method to an internal team's workload", async () => {
    const team = catalogWith(await identity.tokens.mint("reporting/exporter"));
    expect(await codeOf(team.listModels({}))).toBe("ok");
    expect(await codeOf(team.resolveModel({}))).toBe("PermissionDenied");
    // The same name in another namespace is another workload.
    expect(await codeOf(catalogWith(await identity.tokens.mint("other-team/exporter")).listModels({}))).toBe("PermissionDenied");
  });

  test.each([
    ["no method", "reporting/exporter=articles.x.v1.S"],
    ["no caller", "=articles.x.v1.S/M"],
    ["a malformed caller", "Team A=articles.x.v1.S/M"],
  ])("CALLER_GRANTS with %s is refused naming the variable", (_, value) => {
    expect(() => loadCallerGrants({ CALLER_GRANTS: value })).toThrow(ConfigError);
    expect(() => loadCallerGrants({ CALLER_GRANTS: value })).toThrow(/^CALLER_GRANTS: /);
  });
});

describe("where the keys come from", () => {
  const settingsWith = (env: Record<string, string>) => loadIdentitySettings({ IDENTITY_TOKEN_FILE: "/unused", IDENTITY_ISSUER: LOCAL_ISSUER, ...env });
  test.each([
    ["a file", "/var/run/keys/jwks.json", {}],
    ["an https URL", "https://kubernetes.default.svc/openid/v1/jwks", {}],
    ["http to loopback in a development setup", "http://127.0.0.1:8080/jwks", { ALLOW_PRIVATE_URLS: "true" }],
    ["http to localhost in a development setup", "http://localhost:8080/jwks", { ALLOW_PRIVATE_URLS: "true" }],
    ["http to a private address in a development setup", "http://10.0.4.2/jwks", { ALLOW_PRIVATE_URLS: "true" }],
  ])("%s is taken", (_, jwks, env) => {
    expect(settingsWith({ IDENTITY_JWKS: jwks, ...env }).jwks).toBe(jwks);
  });
  test.each([
    ["plain http", "http://127.0.0.1:8080/jwks", {}, /plain http is only for a development setup \(ALLOW_PRIVATE_URLS=true\)/],
    ["plain http to a public name, even in a development setup", "http://keys.example.com/jwks", { ALLOW_PRIVATE_URLS: "true" }, /not keys\.example\.com; use https/],
    ["plain http to a public address, even in a development setup", "http://203.0.113.9/jwks", { ALLOW_PRIVATE_URLS: "true" }, /not 203\.0\.113\.9; use https/],
    ["another scheme", "ftp://keys.example.com/jwks", {}, /got a ftp: URL/],
  ])("%s is refused at start, one line naming IDENTITY_JWKS", (_, jwks, env, problem) => {
    expect(() => settingsWith({ IDENTITY_JWKS: jwks, ...env })).toThrow(ConfigError);
    expect(() => settingsWith({ IDENTITY_JWKS: jwks, ...env })).toThrow(new RegExp(`^IDENTITY_JWKS: .*${problem.source}`));
  });
  test("a service given plain http keys outside a development setup stops at start with one line naming IDENTITY_JWKS", async () => {
    const service = Bun.spawn([process.execPath, "services/accounts-billing/src/main.ts"], {
      cwd: new URL("../..", import.meta.url).pathname,
      env: { ...process.env, IDENTITY_JWKS: "http://10.0.4.2/jwks", ALLOW_PRIVATE_URLS: "false", IDENTITY_ISSUER: LOCAL_ISSUER, IDENTITY_TOKEN_FILE: "/nonexistent", CONNECT_PORT: "0", GRPC_PORT: "0", METRICS_PORT: "0" },
      stdout: "pipe",
      stderr: "pipe",
    });
    const stderrText = new Response(service.stderr).text();
    // A service that starts instead would run until killed: it gets 30 s (well inside the test's timeout) to stop.
    const stopped = await Promise.race([service.exited.then(() => true), Bun.sleep(30_000).then(() => false)]);
    if (!stopped) service.kill("SIGKILL");
    const [code, stderr] = await Promise.all([service.exited, stderrText]);
    expect(stopped ? "stopped" : `still running after 30 s, killed; it wrote: ${stderr}`).toBe("stopped");
    expect(code).toBe(2);
    expect(stderr.trim().split("\n")).toEqual(["configuration error: IDENTITY_JWKS: expected a file or an https URL; plain http is only for a development setup (ALLOW_PRIVATE_URLS=true) on a loopback or private address"]);
  });
  test("IDENTITY_TOKEN_MAX_SECONDS is a whole number of seconds, an hour unless set", () => {
    expect(settingsWith({ IDENTITY_JWKS: "/k.json" }).maxLifetimeSeconds).toBe(3600);
    expect(settingsWith({ IDENTITY_JWKS: "/k.json", IDENTITY_TOKEN_MAX_SECONDS: "86400" }).maxLifetimeSeconds).toBe(86_400);
    expect(() => settingsWith({ IDENTITY_JWKS: "/k.json", IDENTITY_TOKEN_MAX_SECONDS: "1h" })).toThrow(/^IDENTITY_TOKEN_MAX_SECONDS: /);
    expect(() => settingsWith({ IDENTITY_JWKS: "/k.json", IDENTITY_TOKEN_MAX_SECONDS: "0" })).toThrow(/^IDENTITY_TOKEN_MAX_SECONDS: must be at least 60/);
  });
});

describe("key rotation", () => {
  test("both keys are valid while both are published; tokens of a retired key are refused once the keys are read again", async () => {
    const logged: string[] = [];
    const verifier = new CallerVerifier(identity.settings, { warn: (message, fields) => logged.push(JSON.stringify({ message, ...fields })) });
    const before = await identity.tokens.mint("gateway");
    expect(await verifier.callerOf(`Bearer ${before}`)).toBe("gateway");

    await identity.tokens.rotate();
    const after = await identity.tokens.mint("gateway");
    expect(after).not.toBe(before);
    // A token naming the new key is taken at once (the key set is read again for it), the old one still is.
    expect(await verifier.callerOf(`Bearer ${after}`)).toBe("gateway");
    expect(await verifier.callerOf(`Bearer ${before}`)).toBe("gateway");
    // The server's own verifier too: no call fails during the overlap.
    expect(await codeOf(catalogWith(after).resolveModel({}))).toBe("ok");
    expect(await codeOf(catalogWith(before).resolveModel({}))).toBe("ok");

    identity.tokens.retireOldKeys();
    await verifier.refreshKeys();
    expect(await verifier.callerOf(`Bearer ${after}`)).toBe("gateway");
    const refused = await verifier.callerOf(`Bearer ${before}`).catch((e: ConnectError) => e);
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as ConnectError).code).toBe(Code.Unauthenticated);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/"reason":"its key [0-9a-f]+ has been retired"/);
  });
});
