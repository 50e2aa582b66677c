// Per-project Standard Webhooks signing: the operator sets a secret (shown once), deliveries then
// carry headers the reference `standardwebhooks` library verifies, with one webhook-id across
// retries; removing the secret returns to the spec's unsigned default.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { Webhook } from "standardwebhooks";
import { runAdmin } from "../harness/admin-cli.ts";
import { eventually } from "../harness/eventually.ts";
import { signingClient } from "../harness/service-clients.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { startReceiver, type Receiver } from "../harness/webhook-receiver.ts";
import { createQuickArticle, deliveryLog, publicArticle, webhookTenant, type WebhookTenant } from "./webhooks-fixtures.ts";

let stack: TestStack;
let tenant: WebhookTenant;
let receiver: Receiver;

beforeAll(async () => {
  stack = await useStack();
  tenant = await webhookTenant(stack);
  receiver = startReceiver();
});

afterAll(() => receiver?.stop());

const admin = (...args: string[]) => runAdmin(stack, ...args);

describe("webhook signatures", () => {
  test("the CLI sets a secret, shows it once, and signed deliveries verify across retries", async () => {
    const set = await admin("webhook-secret", "set", "--project", String(tenant.projectId));
    expect(set.code).toBe(0);
    expect(set.json.project_id).toBe(tenant.projectId);
    expect(set.json.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const secret: string = set.json.secret;

    const status = await admin("webhook-secret", "status", "--project", String(tenant.projectId));
    expect(status.json).toMatchObject({ project_id: tenant.projectId, signed: true });
    expect(JSON.stringify(status.json)).not.toContain(secret.slice(6));

    const hook = receiver.hook((n) => (n === 1 ? new Response("retry me", { status: 502 }) : new Response("ok")));
    const created = await createQuickArticle(tenant, { webhook_url: hook.url });
    const [first, second] = await hook.waitForRequests(2);

    const verifier = new Webhook(secret);
    for (const request of [first!, second!]) {
      const verified = verifier.verify(request.body, request.headers) as any;
      expect(verified.data.external_id).toBe(created.external_id);
    }
    const versionId = first!.json.data.current_version_id;
    expect(first!.headers["webhook-id"]).toBe(`msg_${created.external_id}_${versionId}`);
    expect(second!.headers["webhook-id"]).toBe(first!.headers["webhook-id"]);
    expect(Number(second!.headers["webhook-timestamp"])).toBeGreaterThanOrEqual(Number(first!.headers["webhook-timestamp"]));
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 7).toString("base64")}`).verify(first!.body, first!.headers)).toThrow();

    await eventually(() => publicArticle(tenant, created.id), (a) => a.status === "published", 10_000, "status published");
    expect((await deliveryLog(stack, created.external_id)).map((a) => a.deliveryId)).toEqual([first!.headers["webhook-id"], first!.headers["webhook-id"]]);
  });

  test("removing the secret returns deliveries to unsigned", async () => {
    await signingClient(stack).setSigningSecret({ projectId: BigInt(tenant.projectId) });
    const removed = await admin("webhook-secret", "remove", "--project", String(tenant.projectId));
    expect(removed).toMatchObject({ code: 0, json: { project_id: tenant.projectId, removed: true } });
    const again = await admin("webhook-secret", "remove", "--project", String(tenant.projectId));
    expect(again.json.removed).toBe(false);
    expect((await admin("webhook-secret", "status", "--project", String(tenant.projectId))).json).toEqual({
      project_id: tenant.projectId,
      signed: false,
      secret_created_at: null,
    });

    const hook = receiver.hook();
    await createQuickArticle(tenant, { webhook_url: hook.url });
    const [request] = await hook.waitForRequests(1);
    expect(request!.headers["webhook-signature"]).toBeUndefined();
    expect(request!.headers["webhook-id"]).toBeUndefined();
  });

  test("a secret for a project that does not exist is NOT_FOUND", async () => {
    const error = await signingClient(stack)
      .setSigningSecret({ projectId: 987_654_321n })
      .then(() => undefined, (e: unknown) => e);
    expect(error).toBeInstanceOf(ConnectError);
    expect((error as ConnectError).code).toBe(Code.NotFound);

    const cli = await admin("webhook-secret", "set", "--project", "987654321");
    expect(cli.code).not.toBe(0);
    expect(JSON.parse(cli.stderr).code).toBe(Code.NotFound);
  });
});
