// One request id across the whole stack: the id a client sends with POST /v1/articles stands on
// the gateway's access line, on the access line of every service call the request makes, and on
// the log lines of the generation run and the webhook delivery it causes, in their own processes.
// A stack of its own, whose processes' output is read.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { startStack, type Stack } from "../../deploy/local/stack.ts";
import { eventually } from "../harness/eventually.ts";
import { dropTestData, TEST_STACK_ENV, type TestStack } from "../harness/stack.ts";
import { startReceiver, type Receiver } from "../harness/webhook-receiver.ts";
import { accessLogSample } from "../../services/kit/src/call-log.ts";
import { ConfigError } from "../../services/kit/src/config.ts";
import { webhookTenant, type WebhookTenant } from "./webhooks-fixtures.ts";
import { articleBody } from "./generation-support.ts";

const id = `${process.pid}_${randomBytes(3).toString("hex")}`;
const databaseUrl = `postgres://postgres@127.0.0.1:5432/articles_test_${id}`;
const redisPrefix = `test-${id}`;
let stack: Stack | undefined;
let receiver: Receiver;
let tenant: WebhookTenant;
const lines: { service?: string; message?: string; request_id?: string; [key: string]: unknown }[] = [];

beforeAll(async () => {
  receiver = startReceiver();
  stack = await startStack({
    randomPorts: true,
    output: "pipe",
    env: { ...TEST_STACK_ENV, LOG_LEVEL: "info", DATABASE_URL: databaseUrl, REDIS_URL: process.env.REDIS_URL ?? "redis://127.0.0.1:6379", REDIS_PREFIX: redisPrefix, OPENAI_API_KEY: undefined, OPENAI_BASE_URL: undefined },
  });
  for (const child of stack.processes.values()) {
    (async () => {
      const decoder = new TextDecoder();
      let rest = "";
      for await (const chunk of child.stdout as unknown as AsyncIterable<Uint8Array>) {
        const text = rest + decoder.decode(chunk, { stream: true });
        const parts = text.split("\n");
        rest = parts.pop()!;
        for (const part of parts) if (part.startsWith("{")) lines.push(JSON.parse(part));
      }
    })().catch(() => {});
  }
  tenant = await webhookTenant({ ...stack, databaseUrl, redisPrefix } as TestStack);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  receiver?.stop();
  await dropTestData(databaseUrl, redisPrefix);
}, 60_000);

describe("a request id", () => {
  test("travels from the client's request to every service call, the generation run and the webhook delivery", async () => {
    const requestId = `support-${randomBytes(8).toString("hex")}`;
    const hook = receiver.hook();
    const res = await tenant.api.post("/v1/articles", articleBody(tenant.projectId, { title: "Followed by its id", article_type: "webhook_quick", target_word_count: 100, point_of_view: "third_person", webhook_url: hook.url }), {
      headers: { "x-request-id": requestId },
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("x-request-id")).toBe(requestId);
    await hook.waitForRequests(1, 60_000);
    const ofRequest = () => lines.filter((l) => l.request_id === requestId);
    // The delivery's last line is written after the receiver answered: wait for it.
    await eventually(async () => ofRequest(), (found) => found.some((l) => l.service === "webhook-dispatcher" && l.message === "webhook delivered"), 15_000, "the delivery's line");
    const found = ofRequest();
    // The gateway's access line.
    expect(found.some((l) => l.service === "gateway" && l.message === "request" && l.route === "/v1/articles" && l.status === 201)).toBe(true);
    // Access lines of the calls the request made, in the services that answered them, with their caller.
    expect(found.some((l) => l.service === "accounts-billing" && l.message === "call" && l.caller === "gateway" && l.method === "articles.accounts_billing.v1.QuotaService/ReserveWords")).toBe(true);
    expect(found.some((l) => l.service === "article-store" && l.message === "call" && l.caller === "gateway" && l.method === "articles.article_store.v1.ArticleStoreService/CreateArticle")).toBe(true);
    // The run's calls (taken up from its job) and the delivery, in their own processes.
    expect(found.some((l) => l.service === "article-store" && l.message === "call" && l.caller === "generation-runner")).toBe(true);
    expect(found.some((l) => l.service === "webhook-dispatcher" && l.message === "webhook delivered")).toBe(true);
    // Another request's lines do not carry it.
    expect(lines.filter((l) => l.message === "request" && l.route === "/healthz").every((l) => l.request_id !== requestId)).toBe(true);
  }, 90_000);

  test("ACCESS_LOG_SAMPLE is a share from 0 to 1; anything else names the variable", () => {
    expect(accessLogSample({})).toBe(1);
    expect(accessLogSample({ ACCESS_LOG_SAMPLE: "0.1" })).toBe(0.1);
    expect(accessLogSample({ ACCESS_LOG_SAMPLE: "0" })).toBe(0);
    for (const bad of ["2", "-0.5", "ten percent", "1.5"]) expect(() => accessLogSample({ ACCESS_LOG_SAMPLE: bad })).toThrow(ConfigError);
  });
});
