// SSRF protection of webhook deliveries with ALLOW_PRIVATE_URLS=false (the production default).
// The shared test stack allows private URLs so that local receivers work; for this file its
// dispatcher is swapped for one started with the default, on the same queue, database and port.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { eventually } from "../harness/eventually.ts";
import { signingClient } from "../harness/service-clients.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { startReceiver, type Receiver } from "../harness/webhook-receiver.ts";
import { createQuickArticle, deliveryFailure, deliveryLog, publicArticle, webhookTenant, type WebhookTenant } from "./webhooks-fixtures.ts";

let stack: TestStack;
let tenant: WebhookTenant;
let receiver: Receiver;
let guardedDispatcher: Subprocess | undefined;

beforeAll(async () => {
  stack = await useStack();
  tenant = await webhookTenant(stack);
  receiver = startReceiver();
  // One consumer of the queue at a time: stop the permissive one before starting the guarded one.
  await stack.kill("webhookDispatcher", "SIGTERM");
  guardedDispatcher = Bun.spawn([process.execPath, "services/webhook-dispatcher/src/main.ts"], {
    cwd: new URL("../../", import.meta.url).pathname,
    env: { ...stack.env, IDENTITY_TOKEN_FILE: await stack.identity.tokenFile("webhook-dispatcher"), ALLOW_PRIVATE_URLS: "false", CONNECT_PORT: new URL(stack.env.WEBHOOK_DISPATCHER_URL!).port, GRPC_PORT: new URL(stack.grpcUrls.webhookDispatcher).port },
    stdout: process.env.STACK_LOGS ? "inherit" : "ignore",
    stderr: "inherit",
  });
  const projectId = BigInt(tenant.projectId);
  await eventually(
    async () => (guardedDispatcher!.exitCode === null ? signingClient(stack).getSigningStatus({ projectId }).then(() => true, () => false) : Promise.reject(new Error("the guarded dispatcher exited"))),
    (serving) => serving,
    20_000,
    "the guarded webhook-dispatcher to serve",
  );
}, 40_000);

afterAll(async () => {
  receiver?.stop();
  if (guardedDispatcher && guardedDispatcher.exitCode === null) {
    guardedDispatcher.kill("SIGTERM");
    await guardedDispatcher.exited;
  }
  // Later files get the stack's own dispatcher back.
  await stack.start("webhookDispatcher");
}, 40_000);

describe("webhook_url pointing inside is refused once, logged, and never retried", () => {
  // What the tenant reads names their own URL's host, never the address a name resolved to.
  const cases: [string, (port: string, path: string) => string, string][] = [
    ["127.0.0.1", (port, path) => `http://127.0.0.1:${port}${path}`, "127.0.0.1 is a private address, which is not allowed"],
    ["the cloud metadata address", () => "http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a private address, which is not allowed"],
    ["[::1]", (port, path) => `http://[::1]:${port}${path}`, "::1 is a private address, which is not allowed"],
    ["a hostname resolving to a private address", (port, path) => `http://localhost:${port}${path}`, "localhost resolves to a private address, which is not allowed"],
  ];

  test.each(cases)("refuses %s", async (_label, urlOf, why) => {
    const hook = receiver.hook();
    const path = new URL(hook.url).pathname;
    const port = new URL(receiver.origin).port;
    const created = await createQuickArticle(tenant, { webhook_url: urlOf(port, path) });
    const reason = await deliveryFailure(stack, created.external_id);

    expect(reason).toContain("refused without retrying");
    expect(reason).toContain(why);
    const log = await deliveryLog(stack, created.external_id);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ attempt: 1, succeeded: false });
    expect(log[0]!.statusCode).toBeUndefined();
    expect(log[0]!.error).toContain("refused-address");
    expect(log[0]!.error).toContain(why);
    for (const told of [reason, log[0]!.error!]) expect(told).not.toMatch(/loopback|cloud metadata|resolves to .*(127\.0\.0\.1|::1)/);

    // No retry follows, nothing reached the receiver, and the article stays completed.
    await Bun.sleep(1200);
    expect(await deliveryLog(stack, created.external_id)).toHaveLength(1);
    expect(hook.requests).toHaveLength(0);
    const article = await publicArticle(tenant, created.id);
    expect(article.status).toBe("completed");
    expect(article.published_version_id).toBeNull();
  }, 40_000);
});

describe("a webhook endpoint pointing inside", () => {
  test("gets its test event refused at the first attempt, logged for the tenant, and never retried", async () => {
    const hook = receiver.hook();
    const path = `/v1/projects/${tenant.projectId}/webhook-endpoints`;
    // The address is checked when a delivery is attempted (a name can resolve elsewhere later), so it is accepted here.
    const created = await tenant.api.post(path, { url: `http://127.0.0.1:${new URL(receiver.origin).port}${new URL(hook.url).pathname}`, events: ["article.completed"] });
    expect(created.status).toBe(201);
    const sent = await tenant.api.post(`${path}/${created.body.data.id}/test`);
    expect(sent.status).toBe(202);
    const [delivery] = await eventually(
      async () => (await tenant.api.get(`${path}/${created.body.data.id}/deliveries`)).body.data,
      (d: any[]) => d[0]?.state === "failed",
      15_000,
      "the endpoint delivery to be given up",
    );
    expect(delivery.attempts).toHaveLength(1);
    expect(delivery.attempts[0]).toMatchObject({ succeeded: false, status_code: null });
    expect(delivery.attempts[0].error).toContain("127.0.0.1 is a private address, which is not allowed");
    expect(hook.requests).toHaveLength(0);
  }, 30_000);
});
