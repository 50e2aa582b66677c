// Calls between the project's processes (services/kit/src/clients.ts) against a real service server
// of the kit: the same answers, codes and field errors as Connect's transport, the deadline and a
// caller's cancel reported as such, an unreachable service as UNAVAILABLE, the credential sent.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { ModelCatalogService } from "../../proto/gen/articles/generation_runner/v1/models_pb.ts";
import { Health, HealthCheckResponse_ServingStatus as Serving } from "../../proto/gen/grpc/health/v1/health_pb.ts";
import { startServiceServer, type ServiceServer } from "../../services/kit/src/server.ts";
import { createLogger } from "../../services/kit/src/logger.ts";
import { invalidFields, fieldErrorsOf } from "../../services/kit/src/errors.ts";
import { serviceClient } from "../../services/kit/src/clients.ts";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { allow, CALLERS } from "../../services/kit/src/access-policy.ts";
import { fixedCredential, type Credential } from "../../services/kit/src/workload-identity.ts";
import { testIdentity, type TestIdentity } from "../harness/identity.ts";

let identity: TestIdentity;
let TOKEN: Credential;
let server: ServiceServer;
let baseUrl: string;

beforeAll(async () => {
  identity = await testIdentity();
  TOKEN = await identity.tokens.credential(CALLERS.gateway);
  server = await startServiceServer({
    name: "transport-test",
    port: 0,
    grpcPort: 0,
    host: "127.0.0.1",
    verifier: identity.verifier,
    access: [allow(ModelCatalogService, { resolveModel: [CALLERS.gateway], listModels: [], addModel: [], updateModel: [] })],
    logger: createLogger("transport-test"),
    metrics: false,
    routes: (router) =>
      router.service(ModelCatalogService, {
        async resolveModel(req) {
          if (req.model === "slow") await Bun.sleep(400);
          if (req.model === "unknown") throw invalidFields({ model: ["The selected model unknown is not an active model."] });
          return { model: { id: req.model || "openai:cheapest", supportsBatch: true } };
        },
      }),
  });
  baseUrl = `http://127.0.0.1:${server.port}`;
});

afterAll(async () => {
  await server.drain(0);
  identity.remove();
});

describe("calls between the project's processes", () => {
  test("answer with the service's message", async () => {
    const models = serviceClient(ModelCatalogService, { baseUrl, credential: TOKEN });
    const [a, b] = await Promise.all([models.resolveModel({ model: "openai:gpt-4o-mini" }), models.resolveModel({})]);
    expect(a.model?.id).toBe("openai:gpt-4o-mini");
    expect(a.model?.supportsBatch).toBe(true);
    expect(b.model?.id).toBe("openai:cheapest");
  });

  test("a refusal keeps its code and field errors", async () => {
    const models = serviceClient(ModelCatalogService, { baseUrl, credential: TOKEN });
    const error = await models.resolveModel({ model: "unknown" }).catch((e) => e);
    expect(error).toBeInstanceOf(ConnectError);
    expect(error.code).toBe(Code.InvalidArgument);
    expect(fieldErrorsOf(error)).toEqual({ model: ["The selected model unknown is not an active model."] });
  });

  test("the credential travels with every call", async () => {
    const models = serviceClient(ModelCatalogService, { baseUrl, credential: fixedCredential("not-the-token-of-this-service") });
    const error = await models.resolveModel({}).catch((e) => e);
    expect(error.code).toBe(Code.Unauthenticated);
  });

  test("the deadline ends a call as DEADLINE_EXCEEDED, the caller's own or the default", async () => {
    const models = serviceClient(ModelCatalogService, { baseUrl, credential: TOKEN, timeoutMs: 100 });
    const started = performance.now();
    expect((await models.resolveModel({ model: "slow" }).catch((e) => e)).code).toBe(Code.DeadlineExceeded);
    expect(performance.now() - started).toBeLessThan(350);
    expect((await models.resolveModel({ model: "slow" }, { timeoutMs: 50 }).catch((e) => e)).code).toBe(Code.DeadlineExceeded);
    expect((await models.resolveModel({ model: "quick" })).model?.id).toBe("quick");
  });

  test("a caller's cancel ends the call as CANCELED", async () => {
    const models = serviceClient(ModelCatalogService, { baseUrl, credential: TOKEN });
    const controller = new AbortController();
    const call = models.resolveModel({ model: "slow" }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    expect((await call.catch((e) => e)).code).toBe(Code.Canceled);
  });

  test("a service out of reach is UNAVAILABLE, so callers treat it as an outage", async () => {
    const probe = Bun.serve({ port: 0, fetch: () => new Response() });
    const closedPort = probe.port;
    probe.stop(true);
    const models = serviceClient(ModelCatalogService, { baseUrl: `http://127.0.0.1:${closedPort}`, credential: TOKEN });
    expect((await models.resolveModel({}).catch((e) => e)).code).toBe(Code.Unavailable);
  });

  test("streaming calls still work, through Connect's transport", async () => {
    const health = serviceClient(Health, { baseUrl, credential: TOKEN });
    expect((await health.check({})).status).toBe(Serving.SERVING);
    const controller = new AbortController();
    for await (const answer of health.watch({}, { signal: controller.signal })) {
      expect(answer.status).toBe(Serving.SERVING);
      controller.abort();
      break;
    }
  });

  test("a unary reply is one whole body with its length, and stock Connect clients are served in both encodings", async () => {
    const raw = await fetch(`${baseUrl}/${ModelCatalogService.typeName}/ResolveModel`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: TOKEN.authorization() },
      body: JSON.stringify({ model: "openai:gpt-4o" }),
    });
    const text = await raw.text();
    expect(raw.status).toBe(200);
    expect(raw.headers.get("transfer-encoding")).toBeNull();
    expect(Number(raw.headers.get("content-length"))).toBe(new TextEncoder().encode(text).byteLength);
    expect(JSON.parse(text).model.id).toBe("openai:gpt-4o");

    for (const form of [{ useBinaryFormat: true }, { useBinaryFormat: false }]) {
      const transport = createConnectTransport({ baseUrl, httpVersion: "1.1", interceptors: [(next) => (req) => (req.header.set("authorization", TOKEN.authorization()), next(req))], ...form });
      const models = createClient(ModelCatalogService, transport);
      expect((await models.resolveModel({ model: "openai:gpt-4o" })).model?.id).toBe("openai:gpt-4o");
      expect((await models.resolveModel({ model: "unknown" }).catch((e) => e)).code).toBe(Code.InvalidArgument);
    }
  });
});
