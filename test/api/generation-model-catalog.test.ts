// The model catalog of generation-runner over its gRPC contract (what article creation and the
// operator CLI call): seeded simulated models, default resolution, add and update rules (prices,
// fallbacks, rate limits).
import { beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { fieldErrorsOf } from "../../services/kit/src/errors.ts";
import { modelCatalogClient } from "../harness/service-clients.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { eventually } from "../harness/eventually.ts";
import { apiClient } from "../harness/http.ts";
import { createTenant } from "../harness/tenants.ts";
import { articleBody } from "../harness/articles.ts";

let stack: TestStack;
let catalog: ReturnType<typeof modelCatalogClient>;
/** As article creation (the gateway) resolves models. */
let resolver: ReturnType<typeof modelCatalogClient>;

beforeAll(async () => {
  stack = await useStack();
  catalog = modelCatalogClient(stack);
  resolver = modelCatalogClient(stack, "gateway");
});

async function rejection(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (error) {
    return ConnectError.from(error);
  }
  throw new Error("expected the call to fail");
}

const uniqueId = (provider = "simulator") => `${provider}:test-${randomBytes(4).toString("hex")}`;

describe("the seeded catalog", () => {
  test("lists the simulated models with their prices, batch support and fallbacks", async () => {
    const { models } = await catalog.listModels({});
    const byId = new Map(models.map((m) => [m.id, m]));
    expect(byId.get("simulator:sim-fast")).toMatchObject({ active: true, inputPricePerMillion: "0.10", outputPricePerMillion: "0.40" });
    expect(byId.get("simulator:sim-pro")).toMatchObject({ active: true, fallbackModel: "simulator:sim-fast" });
    expect(byId.get("simulator:sim-batch")).toMatchObject({ active: true, supportsBatch: true });
    expect(byId.get("simulator:unavailable-model")).toMatchObject({ active: true, fallbackModel: "simulator:sim-fast" });
    // The stack runs on the simulator: the real OpenAI model is listed but not active.
    expect(byId.get("openai:gpt-4o-mini")?.active).toBe(false);
  });

  test("the default is the cheapest active model", async () => {
    const { model } = await resolver.resolveModel({ model: "" });
    expect(model?.id).toBe("simulator:sim-fast");
  });

  test("a requested active model resolves to itself", async () => {
    const { model } = await resolver.resolveModel({ model: "simulator:sim-pro" });
    expect(model).toMatchObject({ id: "simulator:sim-pro", inputPricePerMillion: "2.50", outputPricePerMillion: "10.00" });
  });

  test("unknown and inactive models are rejected on the field model", async () => {
    const unknown = await rejection(resolver.resolveModel({ model: "simulator:no-such-model" }));
    expect(unknown.code).toBe(Code.InvalidArgument);
    expect(Object.keys(fieldErrorsOf(unknown))).toEqual(["model"]);
    const inactive = await rejection(resolver.resolveModel({ model: "openai:gpt-4o-mini" }));
    expect(inactive.code).toBe(Code.InvalidArgument);
    expect(fieldErrorsOf(inactive).model?.[0]).toContain("not an active model");
  });
});

describe("operators change the catalog", () => {
  test("add, then update prices, status and fallback", async () => {
    const id = uniqueId();
    const { model } = await catalog.addModel({ model: { id, active: true, inputPricePerMillion: "0.7", outputPricePerMillion: "1.25", fallbackModel: "simulator:sim-fast" } });
    expect(model).toMatchObject({ id, active: true, supportsBatch: false, inputPricePerMillion: "0.70", outputPricePerMillion: "1.25", fallbackModel: "simulator:sim-fast" });

    // Resolved at once after each change, though the runner remembers the catalog it read.
    expect((await resolver.resolveModel({ model: id })).model?.outputPricePerMillion).toBe("1.25");
    const updated = await catalog.updateModel({ id, outputPricePerMillion: "3.125", supportsBatch: true, fallbackModel: "" });
    expect(updated.model).toMatchObject({ outputPricePerMillion: "3.125", supportsBatch: true, inputPricePerMillion: "0.70" });
    expect(updated.model?.fallbackModel).toBeUndefined();
    expect((await resolver.resolveModel({ model: id })).model).toMatchObject({ outputPricePerMillion: "3.125", supportsBatch: true });

    await catalog.updateModel({ id, active: false });
    const inactive = await rejection(resolver.resolveModel({ model: id }));
    expect(inactive.code).toBe(Code.InvalidArgument);
  });

  test("a taken id is ALREADY_EXISTS", async () => {
    const error = await rejection(catalog.addModel({ model: { id: "simulator:sim-fast", active: true, inputPricePerMillion: "1", outputPricePerMillion: "1" } }));
    expect(error.code).toBe(Code.AlreadyExists);
  });

  test("malformed ids, prices and fallbacks are field errors", async () => {
    const error = await rejection(
      catalog.addModel({ model: { id: "no-provider", active: true, inputPricePerMillion: "-1", outputPricePerMillion: "abc", fallbackModel: "simulator:missing" } }),
    );
    expect(error.code).toBe(Code.InvalidArgument);
    expect(Object.keys(fieldErrorsOf(error)).sort()).toEqual(["fallback_model", "id", "input_price_per_million", "output_price_per_million"]);
    const self = uniqueId();
    await catalog.addModel({ model: { id: self, active: false, inputPricePerMillion: "1", outputPricePerMillion: "1" } });
    const loop = await rejection(catalog.updateModel({ id: self, fallbackModel: self }));
    expect(fieldErrorsOf(loop).fallback_model).toBeDefined();
  });

  test("a model on a provider this runner has not configured cannot be selected", async () => {
    const id = uniqueId("nowhere");
    await catalog.addModel({ model: { id, active: true, inputPricePerMillion: "0", outputPricePerMillion: "0" } });
    const error = await rejection(resolver.resolveModel({ model: id }));
    expect(fieldErrorsOf(error).model?.[0]).toContain("provider is not configured");
    // Free as it is, it is never the default either.
    expect((await resolver.resolveModel({ model: "" })).model?.id).toBe("simulator:sim-fast");
  });

  test("rate limits: set on add, changed, removed with their clear_ fields", async () => {
    const id = uniqueId();
    const { model } = await catalog.addModel({
      model: { id, active: true, inputPricePerMillion: "1", outputPricePerMillion: "1", requestsPerMinute: 500, tokensPerMinute: 10_000_000_000n, maxConcurrentCalls: 100_000 },
    });
    expect(model).toMatchObject({ requestsPerMinute: 500, tokensPerMinute: 10_000_000_000n, maxConcurrentCalls: 100_000 });

    const changed = await catalog.updateModel({ id, requestsPerMinute: 1, clearTokensPerMinute: true });
    expect(changed.model).toMatchObject({ requestsPerMinute: 1, maxConcurrentCalls: 100_000, inputPricePerMillion: "1.00" });
    expect(changed.model?.tokensPerMinute).toBeUndefined();

    // A clear_ flag left false changes nothing.
    const same = await catalog.updateModel({ id, clearRequestsPerMinute: false, active: false });
    expect(same.model).toMatchObject({ active: false, requestsPerMinute: 1, maxConcurrentCalls: 100_000 });

    const cleared = await catalog.updateModel({ id, clearRequestsPerMinute: true, clearMaxConcurrentCalls: true });
    const read = (await catalog.listModels({})).models.find((m) => m.id === id);
    for (const m of [cleared.model, read]) {
      expect(m?.requestsPerMinute).toBeUndefined();
      expect(m?.tokensPerMinute).toBeUndefined();
      expect(m?.maxConcurrentCalls).toBeUndefined();
    }
  });

  test("rate limits out of bounds, or set and cleared at once, are field errors", async () => {
    const add = (limits: { requestsPerMinute?: number; tokensPerMinute?: bigint; maxConcurrentCalls?: number }) =>
      rejection(catalog.addModel({ model: { id: uniqueId(), active: true, inputPricePerMillion: "1", outputPricePerMillion: "1", ...limits } }));
    const zero = await add({ requestsPerMinute: 0, tokensPerMinute: 0n, maxConcurrentCalls: 0 });
    expect(zero.code).toBe(Code.InvalidArgument);
    expect(Object.keys(fieldErrorsOf(zero)).sort()).toEqual(["max_concurrent_calls", "requests_per_minute", "tokens_per_minute"]);
    expect(fieldErrorsOf(zero).requests_per_minute?.[0]).toContain("requests_per_minute must be a whole number from 1 to 10,000,000");
    const over = await add({ requestsPerMinute: 10_000_001, tokensPerMinute: 10_000_000_001n, maxConcurrentCalls: 100_001 });
    expect(fieldErrorsOf(over).tokens_per_minute?.[0]).toContain("from 1 to 10,000,000,000");
    expect(fieldErrorsOf(over).max_concurrent_calls?.[0]).toContain("from 1 to 100,000");
    expect(Object.keys(fieldErrorsOf(await add({ requestsPerMinute: -1 })))).toEqual(["requests_per_minute"]);
    expect(Object.keys(fieldErrorsOf(await add({ tokensPerMinute: 2n ** 63n - 1n })))).toEqual(["tokens_per_minute"]);

    const id = uniqueId();
    await catalog.addModel({ model: { id, active: false, inputPricePerMillion: "1", outputPricePerMillion: "1", requestsPerMinute: 60 } });
    const negative = await rejection(catalog.updateModel({ id, maxConcurrentCalls: -5 }));
    expect(Object.keys(fieldErrorsOf(negative))).toEqual(["max_concurrent_calls"]);
    const both = await rejection(catalog.updateModel({ id, requestsPerMinute: 90, clearRequestsPerMinute: true }));
    expect(both.code).toBe(Code.InvalidArgument);
    expect(fieldErrorsOf(both).requests_per_minute?.[0]).toContain("not both");
    // Nothing was changed by the refused updates.
    expect((await catalog.listModels({})).models.find((m) => m.id === id)).toMatchObject({ requestsPerMinute: 60 });
  });

  test("updating an unknown model is NOT_FOUND", async () => {
    expect((await rejection(catalog.updateModel({ id: "simulator:never-added", active: true }))).code).toBe(Code.NotFound);
  });
});

describe("creation through the gateway", () => {
  // The gateway keeps the catalog's answers until a runner announces a change (gateway/src/articles/model-memory.ts):
  // a model switched off is refused to creations within a second, also when its answer has been
  // kept for longer than that.
  test("a model switched off is refused to new articles within a second", async () => {
    const tenant = await createTenant(stack);
    const api = apiClient(stack.baseUrl, tenant.token);
    const id = uniqueId();
    await catalog.addModel({ model: { id, active: true, inputPricePerMillion: "0.5", outputPricePerMillion: "0.5" } });
    const create = () => api.post("/v1/articles", articleBody(tenant.projectId, { model: id }));
    // Created with it for a second and a half: past the settling after the add, the answer is the long-kept one.
    const usedUntil = Date.now() + 1500;
    while (Date.now() < usedUntil) expect((await create()).status).toBe(201);

    await catalog.updateModel({ id, active: false });
    const switchedOff = Date.now();
    // Timed by when the refused request was sent, not by when its answer came back.
    let sentAt = 0;
    const refused = await eventually(() => ((sentAt = Date.now()), create()), (res) => res.status === 422, 5000, "a creation refused");
    expect(sentAt - switchedOff).toBeLessThanOrEqual(1000);
    expect(refused.body.errors.model[0]).toContain("not an active model");
  });
});
