// A pipeline step's model call through the openai SDK against the bundled simulator (real HTTP):
// pricing from token usage, structured outputs for json steps, the fallback model, the step's
// time budget, and batch mode over files + batches.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startSimulator, type RunningSimulator } from "../../services/model-simulator/src/simulator.ts";
import { callModel, chatBody, StepFailure, type ChatRequest, type ModelCalls } from "../../services/generation-runner/src/domain/model-call.ts";
import { Pacer } from "../../services/generation-runner/src/domain/paced-call.ts";
import { ProviderCapacity } from "../../services/generation-runner/src/scheduler/provider-capacity.ts";
import { ProviderLines } from "../../services/generation-runner/src/scheduler/provider-lines.ts";
import { CircuitBreakers } from "../../services/generation-runner/src/domain/circuit-breaker.ts";
import { connectRedis } from "../../services/kit/src/redis.ts";
import { dropTestData } from "../harness/stack.ts";
import type { Logger } from "../../services/kit/src/logger.ts";

const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
import type { CatalogModel } from "../../services/generation-runner/src/domain/model-catalog.ts";
import { ModelClients, providersFromEnv, splitModelId } from "../../services/generation-runner/src/domain/providers.ts";
import { costOfUsage, formatUsd } from "../../services/kit/src/rules/usd.ts";
import { findRunningBatch } from "../../services/generation-runner/src/domain/batch-mode.ts";
import { toFile } from "openai";

let sim: RunningSimulator;
let clients: ModelClients;
let calls: ModelCalls;
const redis = connectRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
const redisPrefix = `test-model-call-${crypto.randomUUID().slice(0, 8)}`;

const model = (id: string, input = "0.10", output = "0.40", fallbackModel: string | null = null): CatalogModel => ({
  id,
  active: true,
  supportsBatch: false,
  inputPricePerMillion: input,
  outputPricePerMillion: output,
  fallbackModel,
  requestsPerMinute: null,
  tokensPerMinute: null,
  maxConcurrentCalls: null,
});
const fast = model("simulator:sim-fast");
const unavailable = model("simulator:unavailable-model", "1.00", "4.00", "simulator:sim-fast");

const request = (user: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({
  system: "You are a careful writer.",
  user,
  temperature: 0.7,
  outputFormat: "markdown",
  schemaName: "step_1",
  timeoutMs: 10_000,
  turn: { account: "1", since: Date.now(), weight: 1 },
  ...extra,
});

async function callsOf(contains: string): Promise<number> {
  const report = (await (await fetch(`${sim.url}/_sim/calls?contains=${encodeURIComponent(contains)}`)).json()) as { total: number };
  return report.total;
}

beforeAll(async () => {
  sim = await startSimulator({ port: 0, batchDelayMs: 100 });
  clients = new ModelClients(providersFromEnv({ SIMULATOR_URL: sim.url }));
  // Server errors are tried again after 20 ms (doubling) in these tests.
  const breakers = new CircuitBreakers(redis, redisPrefix);
  calls = { clients, pacer: new Pacer(new ProviderLines(new ProviderCapacity(redis, redisPrefix), breakers), breakers, silentLogger, 60_000, 20) };
});

afterAll(async () => {
  await sim.stop();
  await dropTestData("postgres://postgres@127.0.0.1:5432/none", redisPrefix);
  redis.disconnect();
});

describe("providers", () => {
  test("are configured from the environment only", () => {
    const providers = providersFromEnv({
      OPENAI_API_KEY: "sk-test",
      SIMULATOR_URL: "http://127.0.0.1:9/",
      PROVIDER_LOCAL_BASE_URL: "http://127.0.0.1:11434/v1",
    });
    expect(providers.get("openai")).toEqual({ name: "openai", baseUrl: undefined, apiKey: "sk-test" });
    expect(providers.get("simulator")?.baseUrl).toBe("http://127.0.0.1:9/v1");
    expect(providers.get("local")).toMatchObject({ baseUrl: "http://127.0.0.1:11434/v1", apiKey: "not-needed" });
    expect(() => providersFromEnv({ PROVIDER_X_BASE_URL: "ftp://nope" })).toThrow("PROVIDER_X_BASE_URL");
  });

  test("model ids split at the first colon", () => {
    expect(splitModelId("local:llama3:8b")).toEqual({ provider: "local", model: "llama3:8b" });
    expect(() => splitModelId("no-provider")).toThrow();
  });
});

describe("a step call", () => {
  test("returns the text and prices its usage at the model's rates", async () => {
    const reply = await callModel(calls, fast, undefined, request(`[[sim:words=40]] Write about tea ${crypto.randomUUID()}`));
    expect(reply.model).toBe("simulator:sim-fast");
    expect(reply.usedFallback).toBe(false);
    expect(reply.promptTokens).toBeGreaterThan(0);
    expect(reply.completionTokens).toBeGreaterThan(0);
    expect(reply.cost).toBe(costOfUsage(fast, reply));
    expect(formatUsd(reply.cost)).toMatch(/^0\.\d+$/);
  });

  test("sends the rendered prompts as they are (echo shows them)", async () => {
    const user = `[[sim:echo]]Exactly this {title} text ${crypto.randomUUID()}`;
    const reply = await callModel(calls, fast, undefined, request(user));
    expect(reply.output).toBe(user.replace("[[sim:echo]]", ""));
  });

  test("json steps use the step's schema as a strict structured output", async () => {
    const schema = JSON.stringify({
      type: "object",
      properties: { meta_title: { type: "string" }, meta_description: { type: "string" } },
      required: ["meta_title", "meta_description"],
      additionalProperties: false,
    });
    const body = chatBody("sim-fast", request("Describe it", { outputFormat: "json", jsonSchema: schema }));
    expect(body.response_format).toEqual({ type: "json_schema", json_schema: { name: "step_1", schema: JSON.parse(schema), strict: true } });
    const reply = await callModel(calls, fast, undefined, request(`Meta for coffee ${crypto.randomUUID()}`, { outputFormat: "json", jsonSchema: schema }));
    expect(Object.keys(JSON.parse(reply.output)).sort()).toEqual(["meta_description", "meta_title"]);
  });

  test("an unavailable model falls back to its configured fallback, which is recorded", async () => {
    const reply = await callModel(calls, unavailable, fast, request(`[[sim:words=20]] Fallback ${crypto.randomUUID()}`));
    expect(reply).toMatchObject({ model: "simulator:sim-fast", usedFallback: true });
    expect(reply.cost).toBe(costOfUsage(fast, reply));
  });

  test("server errors on both models are tried three times in all, then a step failure naming both", async () => {
    const marker = crypto.randomUUID();
    const error = await callModel(calls, unavailable, fast, request(`[[sim:fail]] ${marker}`)).catch((e) => e);
    expect(error).toBeInstanceOf(StepFailure);
    expect(error.message).toContain("simulator:unavailable-model answered 503");
    expect(error.message).toContain("simulator:sim-fast answered 500");
    // The primary, at once the fallback, then after a pause the primary again.
    expect(await callsOf(marker)).toBe(3);
  });

  test("a step over its time budget fails without trying the fallback", async () => {
    const marker = crypto.randomUUID();
    const started = Date.now();
    const error = await callModel(calls, fast, fast, request(`[[sim:sleep=3000]] ${marker}`, { timeoutMs: 300 })).catch((e) => e);
    expect(error).toBeInstanceOf(StepFailure);
    expect(error.message).toContain("timed out");
    expect(Date.now() - started).toBeLessThan(2500);
    expect(await callsOf(marker)).toBe(1);
  });

  test("an unconfigured provider falls back too", async () => {
    const reply = await callModel(calls, model("elsewhere:some-model"), fast, request(`[[sim:words=10]] ${crypto.randomUUID()}`));
    expect(reply).toMatchObject({ model: "simulator:sim-fast", usedFallback: true });
  });
});

describe("batch mode after a crash", () => {
  test("a batch still running for the article is found by its metadata, not submitted again", async () => {
    const { client } = clients.forModel("simulator:sim-batch");
    const externalId = crypto.randomUUID();
    const input = await client.files.create({ file: await toFile(Buffer.from(JSON.stringify({ custom_id: externalId, method: "POST", url: "/v1/chat/completions", body: { model: "sim-batch", messages: [{ role: "user", content: "[[sim:words=5]] hi" }] } }) + "\n"), "in.jsonl"), purpose: "batch" });
    const batch = await client.batches.create({ input_file_id: input.id, endpoint: "/v1/chat/completions", completion_window: "24h", metadata: { external_id: externalId } });
    expect(await findRunningBatch(client, externalId)).toBe(batch.id);
    expect(await findRunningBatch(client, crypto.randomUUID())).toBeUndefined();
    // A batch that ended is not reused: a retry after a failed batch submits afresh.
    await client.batches.cancel(batch.id);
    expect(await findRunningBatch(client, externalId)).toBeUndefined();
  });
});
