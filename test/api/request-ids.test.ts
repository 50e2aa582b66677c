// One request id across the whole stack: the id a client sends with POST /v1/articles stands on
// the gateway's access line, on the access line of every service call the request makes, and on
// the log lines of the generation run and the webhook delivery it causes, in their own processes.
// Access lines name the account and the key's id, never the key; calls to the public gRPC API
// get an id and an access line too. A stack of its own, whose processes' output is read.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { ArticleService } from "../../proto/gen/articles/api/v1/articles_pb.ts";
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
    // The gateway's access line, naming the account and the key's id.
    const access = found.filter((l) => l.service === "gateway" && l.message === "request");
    expect(access).toEqual([expect.objectContaining({ method: "POST", route: "/v1/articles", status: 201, account_id: tenant.accountId, key_id: tenant.keyId, ms: expect.any(Number) })]);
    // Access lines of the calls the request made, in the services that answered them, with their caller.
    expect(found.some((l) => l.service === "accounts-billing" && l.message === "call" && l.caller === "gateway" && l.method === "articles.accounts_billing.v1.QuotaService/ReserveWords")).toBe(true);
    expect(found.some((l) => l.service === "article-store" && l.message === "call" && l.caller === "gateway" && l.method === "articles.article_store.v1.ArticleStoreService/CreateArticle")).toBe(true);
    // The run's calls (taken up from its job) and the delivery, in their own processes.
    expect(found.some((l) => l.service === "article-store" && l.message === "call" && l.caller === "generation-runner")).toBe(true);
    expect(found.some((l) => l.service === "webhook-dispatcher" && l.message === "webhook delivered")).toBe(true);
    // Another request's lines do not carry it.
    expect(lines.filter((l) => l.message === "request" && l.route === "/healthz").every((l) => l.request_id !== requestId)).toBe(true);
  }, 90_000);

  test("a refused request's access line names whom it was refused, or nobody when the key is unknown; never the key", async () => {
    await tenant.api.get("/v1/articles/999999999", { headers: { "x-request-id": "refused-known-key" } });
    const stranger = `sk_${randomBytes(16).toString("hex")}`;
    await fetch(`${stack!.baseUrl}/v1/articles`, { headers: { authorization: `Bearer ${stranger}`, "x-request-id": "refused-unknown-key" } });
    const lineOf = (requestId: string) => eventually(async () => lines.find((l) => l.request_id === requestId && l.message === "request"), Boolean, 10_000, `the access line of ${requestId}`);
    expect(await lineOf("refused-known-key")).toMatchObject({ status: 404, route: "/v1/articles/:id", account_id: tenant.accountId, key_id: tenant.keyId });
    const unknown = await lineOf("refused-unknown-key");
    expect(unknown).toMatchObject({ status: 401, route: "/v1/articles" });
    expect(unknown).not.toHaveProperty("account_id");
    const written = JSON.stringify(lines);
    expect(written).not.toContain(tenant.token);
    expect(written).not.toContain(stranger);
  }, 30_000);

  test("a public gRPC call gets an id, answered in x-request-id (trailers when refused), and an access line with the account and key id", async () => {
    const articles = createClient(ArticleService, createGrpcTransport({ baseUrl: stack!.publicGrpcUrl, defaultTimeoutMs: 10_000 }));
    const headers = { authorization: `Bearer ${tenant.token}` };
    // No id sent: the gateway makes one.
    let answered: string | null = null;
    await articles.listArticles({}, { headers, onHeader: (h) => (answered = h.get("x-request-id")) });
    expect(answered).toMatch(/^[0-9a-f-]{36}$/);
    // A caller's id is kept, on a refusal too.
    const refusal = await articles.getArticle({ id: "999999999" }, { headers: { ...headers, "x-request-id": "grpc-caller-id-1" } }).then(
      () => null,
      (error) => ConnectError.from(error),
    );
    expect(refusal?.code).toBe(Code.NotFound);
    expect(refusal!.metadata.get("x-request-id")).toBe("grpc-caller-id-1");
    const callLine = (requestId: string) => eventually(async () => lines.find((l) => l.request_id === requestId && l.service === "gateway" && l.message === "call"), Boolean, 10_000, `the call line of ${requestId}`);
    expect(await callLine(answered!)).toMatchObject({ method: "articles.api.v1.ArticleService/ListArticles", code: "ok", account_id: tenant.accountId, key_id: tenant.keyId });
    expect(await callLine("grpc-caller-id-1")).toMatchObject({ method: "articles.api.v1.ArticleService/GetArticle", code: "NotFound", account_id: tenant.accountId, key_id: tenant.keyId });
  }, 30_000);

  test("ACCESS_LOG_SAMPLE is a share from 0 to 1; anything else names the variable", () => {
    expect(accessLogSample({})).toBe(1);
    expect(accessLogSample({ ACCESS_LOG_SAMPLE: "0.1" })).toBe(0.1);
    expect(accessLogSample({ ACCESS_LOG_SAMPLE: "0" })).toBe(0);
    for (const bad of ["2", "-0.5", "ten percent", "1.5"]) expect(() => accessLogSample({ ACCESS_LOG_SAMPLE: bad })).toThrow(ConfigError);
  });
});
