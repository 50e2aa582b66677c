// Workload identity and the caller check, on a real service server of the kit with the launcher's
// keys: who a token names, what it takes for a token to be refused, a key rotation with both keys
// valid for a while, and the access table with an operator's grant.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
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
import { CallerVerifier, callerOfSubject, fixedCredential } from "../../services/kit/src/workload-identity.ts";
import { prepareWorkloadTokens } from "../../deploy/local/workload-tokens.ts";
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

describe("a token is refused", () => {
  test("when missing, malformed, expired, for another audience, or signed by a key not published", async () => {
    const stranger = await prepareWorkloadTokens(mkdtempSync(join(tmpdir(), "stranger-")));
    const cases: [string, string][] = [
      ["missing", ""],
      ["not a JWT", "not-a-token"],
      ["expired", await identity.tokens.mint("gateway", { lifetimeSeconds: -120 })],
      ["another audience", await identity.tokens.mint("gateway", { audience: "some-other-system" })],
      ["another launcher's key", await stranger.mint("gateway")],
    ];
    stranger.stop();
    for (const [, token] of cases) expect(await codeOf(catalogWith(token).resolveModel({}))).toBe("Unauthenticated");
    // The same caller with a good token is served.
    expect(await codeOf(catalogWith(await identity.tokens.mint("gateway")).resolveModel({}))).toBe("ok");
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

describe("key rotation", () => {
  test("both keys are valid while both are published; tokens of a retired key are refused once the keys are read again", async () => {
    const verifier = new CallerVerifier(identity.settings);
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
  });
});
