// A project's webhook endpoints over /v1 with an API key: created with a secret shown once, a test
// event a local receiver verifies with the reference Standard Webhooks library, the delivery log
// (time, status, latency, response excerpt), a redelivery under the same webhook-id, a rolled
// secret, the event filter (and in webhooks-delivery.test.ts: an endpoint not subscribed to
// article.failed gets none) and the erasure of an article's deliveries, quota.low at 80% and 95% once each, the audit log of the
// changes, and one call of the public gRPC twin.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { Webhook } from "standardwebhooks";
import postgres from "postgres";
import IORedis from "ioredis";
import { TenantAdminService } from "../../proto/gen/articles/accounts_billing/v1/self_service_pb.ts";
import { eventually } from "../harness/eventually.ts";
import { apiClient } from "../harness/http.ts";
import { quotaClient, stackClient } from "../harness/service-clients.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { addMemberWithKey, createTenant } from "../harness/tenants.ts";
import { startReceiver, type Receiver } from "../harness/webhook-receiver.ts";
import { createQuickArticle, webhookTenant, type WebhookTenant } from "./webhooks-fixtures.ts";
import { ArticleVersionService } from "../../proto/gen/articles/article_store/v1/versions_pb.ts";
import { waitForArticle } from "./generation-support.ts";

let stack: TestStack;
let tenant: WebhookTenant;
let receiver: Receiver;

beforeAll(async () => {
  stack = await useStack();
  tenant = await webhookTenant(stack);
  receiver = startReceiver();
});

afterAll(() => receiver?.stop());

const endpointsPath = () => `/v1/projects/${tenant.projectId}/webhook-endpoints`;

async function addEndpoint(url: string, events: string[]) {
  const res = await tenant.api.post(endpointsPath(), { url, events, description: "Test receiver" });
  expect(res.status).toBe(201);
  return res.body.data as { id: string; secret: string; events: string[] };
}

async function deliveries(endpointId: string): Promise<any[]> {
  const res = await tenant.api.get(`${endpointsPath()}/${endpointId}/deliveries`);
  expect(res.status).toBe(200);
  return res.body.data;
}

/** A tenant of its own with one completed article, then an endpoint of its project subscribed to `event`. */
async function completedBeforeItsEndpoint(event: string) {
  const own = await webhookTenant(stack);
  const article = await createQuickArticle(own, {});
  const completed = await waitForArticle(own.api, article.external_id, (a) => a.status === "completed");
  const hook = receiver.hook();
  expect((await own.api.post(`/v1/projects/${own.projectId}/webhook-endpoints`, { url: hook.url, events: [event] })).status).toBe(201);
  return { own, article, completed, hook };
}

describe("webhook endpoints", () => {
  test("an endpoint is created with its secret shown once; a test event arrives signed; the log shows the attempt; a redelivery repeats it", async () => {
    const hook = receiver.hook(() => new Response("thanks, received"));
    const created = await addEndpoint(hook.url, ["article.completed"]);
    expect(created.id).toMatch(/^we_/);
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);

    // Reads never carry the secret.
    const listed = await tenant.api.get(endpointsPath());
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((e: any) => e.id)).toContain(created.id);
    const one = await tenant.api.get(`${endpointsPath()}/${created.id}`);
    expect(one.body.data).toMatchObject({ id: created.id, url: hook.url, events: ["article.completed"], enabled: true });
    expect(JSON.stringify([listed.body, one.body])).not.toContain(created.secret.slice(6));

    const sent = await tenant.api.post(`${endpointsPath()}/${created.id}/test`);
    expect(sent.status).toBe(202);
    expect(sent.body.data.event_type).toBe("webhook.test");
    const [first] = await hook.waitForRequests(1);
    const verified = new Webhook(created.secret).verify(first!.body, first!.headers) as any;
    expect(verified).toMatchObject({ type: "webhook.test", data: { endpoint_id: created.id, project_id: tenant.projectId } });
    expect(first!.headers["webhook-id"]).toBe(sent.body.data.event_id);

    const logged = await eventually(() => deliveries(created.id), (d) => d[0]?.attempts.length === 1, 10_000, "the test delivery's attempt in the log");
    expect(logged[0]).toMatchObject({ id: sent.body.data.id, state: "succeeded", event_type: "webhook.test" });
    expect(logged[0].attempts[0]).toMatchObject({ status_code: 200, succeeded: true, response_excerpt: "thanks, received", redelivery: false });
    expect(logged[0].attempts[0].duration_ms).toBeGreaterThanOrEqual(0);
    expect(Date.parse(logged[0].attempts[0].attempted_at)).toBeGreaterThan(Date.now() - 60_000);

    const again = await tenant.api.post(`${endpointsPath()}/${created.id}/deliveries/${sent.body.data.id}/redeliver`);
    expect(again.status).toBe(202);
    const [, second] = await hook.waitForRequests(2);
    expect(second!.headers["webhook-id"]).toBe(first!.headers["webhook-id"]);
    expect(second!.body).toBe(first!.body);
    new Webhook(created.secret).verify(second!.body, second!.headers);
    const relogged = await eventually(() => deliveries(created.id), (d) => d[0]?.attempts.length === 2, 10_000, "the redelivery in the log");
    expect(relogged[0].attempts[1]).toMatchObject({ succeeded: true, redelivery: true });

    // A rolled secret signs from then on; the old one no longer verifies.
    const rolled = await tenant.api.post(`${endpointsPath()}/${created.id}/roll-secret`);
    expect(rolled.status).toBe(200);
    expect(rolled.body.data.secret).not.toBe(created.secret);
    await tenant.api.post(`${endpointsPath()}/${created.id}/test`);
    const [, , third] = await hook.waitForRequests(3);
    new Webhook(rolled.body.data.secret).verify(third!.body, third!.headers);
    expect(() => new Webhook(created.secret).verify(third!.body, third!.headers)).toThrow();

    // Who changed what, when: in the account's audit log, without the secret.
    const audit = await stackClient(stack, TenantAdminService, stack.env.ACCOUNTS_BILLING_URL, "gateway").listAuditEvents({ acting: { userId: BigInt(tenant.userId), accountId: BigInt(tenant.accountId) }, limit: 20 });
    const actions = audit.events.filter((e) => e.subject.includes(created.id)).map((e) => e.action);
    expect(actions).toEqual(["endpoint.secret_rolled", "endpoint.created"]);
    expect(JSON.stringify(audit.events.map((e) => e.subject))).not.toContain(rolled.body.data.secret.slice(6));
  });

  test("bad input is refused field by field; a viewer reads but changes nothing; an endpoint of another project is not found", async () => {
    const bad = await tenant.api.post(endpointsPath(), { url: "ftp://example.com/x", events: ["article.completed", "article.exploded"] });
    expect(bad.status).toBe(422);
    expect(Object.keys(bad.body.errors).sort()).toEqual(["events", "url"]);
    const none = await tenant.api.post(endpointsPath(), { url: "https://example.com/hook", events: [] });
    expect(none.status).toBe(422);
    expect(none.body.errors.events).toBeDefined();

    const other = await createTenant(stack);
    const created = await addEndpoint("https://example.com/hook", ["quota.low"]);
    // View access reads the endpoints and their deliveries; every change needs update access.
    const viewer = apiClient(stack.baseUrl, (await addMemberWithKey(stack, tenant, "viewer")).token);
    expect((await viewer.get(`${endpointsPath()}/${created.id}/deliveries`)).status).toBe(200);
    for (const refused of [viewer.post(endpointsPath(), { url: "https://example.com/v", events: ["quota.low"] }), viewer.patch(`${endpointsPath()}/${created.id}`, { enabled: false }), viewer.post(`${endpointsPath()}/${created.id}/test`)]) {
      expect((await refused).status).toBe(403);
    }
    const stranger = apiClient(stack.baseUrl, other.token);
    expect((await stranger.get(`${endpointsPath()}/${created.id}`)).status).toBe(404);
    expect((await stranger.delete(`${endpointsPath()}/${created.id}`)).status).toBe(404);
    expect((await tenant.api.get(`/v1/projects/${other.projectId}/webhook-endpoints/${created.id}`)).status).toBe(404);
    expect((await tenant.api.delete(`${endpointsPath()}/${created.id}`)).body.message).toBe("Webhook endpoint deleted.");
    expect((await tenant.api.get(`${endpointsPath()}/${created.id}`)).status).toBe(404);
  });

  test("events follow the filter: a completion reaches the endpoint subscribed to it, not one subscribed to article.failed; an erasure empties the log", async () => {
    // A failed article and the endpoints of article.failed: webhooks-delivery.test.ts, beside the failure it already waits for.
    const failedOnly = receiver.hook();
    const completedOnly = receiver.hook();
    const onFailure = await addEndpoint(failedOnly.url, ["article.failed"]);
    const some = await addEndpoint(completedOnly.url, ["article.completed"]);

    const article = await createQuickArticle(tenant, {});
    const [completed] = await completedOnly.waitForRequests(1, 30_000);
    expect(new Webhook(some.secret).verify(completed!.body, completed!.headers)).toMatchObject({ type: "article.completed", data: { external_id: article.external_id, status: "completed" } });
    // One fan-out made every delivery of the event: the endpoint it did not concern has none.
    expect(await deliveries(onFailure.id)).toEqual([]);
    expect(failedOnly.requests).toEqual([]);
    // An erased article leaves nothing in the endpoints' delivery logs.
    expect((await tenant.api.delete(`/v1/articles/${article.id}`)).status).toBe(200);
    expect(await deliveries(some.id)).toEqual([]);
    for (const id of [onFailure.id, some.id]) await tenant.api.delete(`${endpointsPath()}/${id}`);
  });

  test("an edit and a restore each reach an endpoint subscribed to article.version_created", async () => {
    const article = await createQuickArticle(tenant, {});
    await waitForArticle(tenant.api, article.external_id, (a) => a.status === "completed");
    const hook = receiver.hook();
    const endpoint = await addEndpoint(hook.url, ["article.version_created"]);
    const current = await tenant.api.get(`/v1/articles/${article.id}`);
    const edited = await tenant.api.patch(`/v1/articles/${article.id}`, { content: "# Webhook delivery check\n\nOne paragraph, edited." }, { headers: { "if-match": current.headers.get("etag")! } });
    expect(edited.status).toBe(200);
    expect((await tenant.api.post(`/v1/articles/${article.id}/versions/1/restore`)).status).toBe(200);
    const [edit, restore] = await hook.waitForRequests(2, 15_000);
    expect(new Webhook(endpoint.secret).verify(edit!.body, edit!.headers)).toMatchObject({ type: "article.version_created", data: { external_id: article.external_id, kind: "edited", number: 2 } });
    expect(restore!.json).toMatchObject({ type: "article.version_created", data: { kind: "restored", number: 3, restored_from: 1 } });
    await tenant.api.delete(`${endpointsPath()}/${endpoint.id}`);
  });

  test("the events of a replica killed before its hand-over reach the endpoints: another sweeps its stale mark", async () => {
    // An article that completed before its project had an endpoint was handed over to none, as a
    // killed replica's would be; the mark it would have left (renewed last a minute ago, covering
    // up to before the completion) makes the running replica hand its events over again.
    const { own, article, completed, hook } = await completedBeforeItsEndpoint("article.completed");
    const sql = postgres(stack.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      const replica = `killed-${article.external_id}`;
      const before = new Date(new Date(completed.updated_at).getTime() - 1000);
      await sql`insert into article_store.endpoint_handover_marks (replica, covered_until, seen_at) values (${replica}, ${before}, now() - interval '1 minute')`;
      const [event] = await hook.waitForRequests(1, 20_000);
      expect(event!.json).toMatchObject({ type: "article.completed", data: { external_id: article.external_id, status: "completed" } });
      await eventually(() => sql`select 1 from article_store.endpoint_handover_marks where replica = ${replica}`, (rows) => rows.length === 0, 10_000, "the swept mark to be removed");
      // A second sweep of the same changes (another replica's mark) delivers nothing twice.
      await sql`insert into article_store.endpoint_handover_marks (replica, covered_until, seen_at) values (${replica + "-2"}, ${before}, now() - interval '1 minute')`;
      await eventually(() => sql`select 1 from article_store.endpoint_handover_marks where replica = ${replica + "-2"}`, (rows) => rows.length === 0, 10_000, "the second mark to be swept");
      const res = await own.api.get(`/v1/projects/${own.projectId}/webhook-endpoints`);
      const log = await own.api.get(`/v1/projects/${own.projectId}/webhook-endpoints/${res.body.data[0].id}/deliveries`);
      expect(log.body.data.filter((d: any) => d.event_type === "article.completed")).toHaveLength(1);
      expect(hook.requests).toHaveLength(1);
    } finally {
      await sql.end();
    }
  });

  test("an article-store killed between an edit's commit and its hand-over loses none of its endpoint events", async () => {
    // An edit: its caller does not call again once it committed (a completion's runner does, and its
    // repeated call hands the event over anyway), so only the dead replica's mark can bring it back.
    const { article, completed: done, hook } = await completedBeforeItsEndpoint("article.version_created");
    const sql = postgres(stack.databaseUrl, { max: 1, onnotice: () => {} });
    const redis = new IORedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
    const versions = stackClient(stack, ArticleVersionService, stack.env.ARTICLE_STORE_URL, "gateway");
    try {
      // Redis's writes are held: the edit commits in Postgres and its hand-over then waits on Redis
      // (half a second at most) while the process is killed.
      await redis.call("CLIENT", "PAUSE", "5000", "WRITE");
      const edit = versions.editArticle({ externalId: article.external_id, baseVersionId: BigInt(done.current_version_id), content: "# Webhook delivery check\n\nEdited as the process died." }).catch((error: Error) => error);
      const versionsOf = async () => (await sql`select count(*)::int as n from article_store.article_versions v join article_store.articles a on a.id = v.article_id where a.external_id = ${article.external_id}`)[0]!.n as number;
      await eventually(versionsOf, (n) => n === 2, 10_000, "the edit committed");
      await stack.kill("articleStore");
      await redis.call("CLIENT", "UNPAUSE");
      expect(await edit).toBeInstanceOf(Error);
      await stack.start("articleStore");
      const [event] = await hook.waitForRequests(1, 20_000);
      expect(event!.json).toMatchObject({ type: "article.version_created", data: { external_id: article.external_id, kind: "edited", number: 2 } });
      await eventually(() => sql`select 1 from article_store.endpoint_handover_marks where seen_at < now() - interval '3 seconds'`, (rows) => rows.length === 0, 10_000, "no stale mark left");
      expect(hook.requests).toHaveLength(1);
    } finally {
      await redis.call("CLIENT", "UNPAUSE").catch(() => {});
      redis.disconnect();
      await sql.end();
      if (stack.processes.get("articleStore")?.exitCode !== null) await stack.start("articleStore");
    }
  }, 60_000);

  test("quota.low fires once at 80% and once at 95% of the month's words", async () => {
    // A plan of 1,000 words: the shared tenant's is large, so this account is made apart.
    const capped = await createTenant(stack, { monthlyWords: 1000 });
    const cappedApi = apiClient(stack.baseUrl, capped.token);
    const hook = receiver.hook();
    const res = await cappedApi.post(`/v1/projects/${capped.projectId}/webhook-endpoints`, { url: hook.url, events: ["quota.low"] });
    expect(res.status).toBe(201);
    const quota = quotaClient(stack);
    const reserve = (reference: string, words: number) => quota.reserveWords({ accountId: BigInt(capped.accountId), reference, words: BigInt(words) });

    await reserve("quota-low-1", 810);
    const [at80] = await hook.waitForRequests(1, 15_000);
    expect(at80!.json).toMatchObject({ type: "quota.low", data: { account_id: capped.accountId, threshold_percent: 80, monthly_words: 1000, words_taken: 810 } });
    await reserve("quota-low-2", 50);
    await reserve("quota-low-3", 100);
    const [, at95] = await hook.waitForRequests(2, 15_000);
    expect(at95!.json).toMatchObject({ type: "quota.low", data: { threshold_percent: 95 } });
    expect(hook.requests.map((r) => r.json.data.threshold_percent)).toEqual([80, 95]);
  });

  test("the public gRPC API lists a project's endpoints as /v1 does", async () => {
    const protoRoot = fileURLToPath(new URL("../../proto", import.meta.url));
    const definition = protoLoader.loadSync("articles/api/v1/webhook_endpoints.proto", { includeDirs: [protoRoot], keepCase: true, longs: String, enums: String, defaults: false, oneofs: true });
    const client = new (grpc.loadPackageDefinition(definition) as any).articles.api.v1.WebhookEndpointService(new URL(stack.publicGrpcUrl).host, grpc.credentials.createInsecure());
    const metadata = new grpc.Metadata();
    metadata.set("authorization", `Bearer ${tenant.token}`);
    const call = (method: string, request: object) =>
      new Promise<any>((resolve, reject) => client[method](request, metadata, { deadline: Date.now() + 10_000 }, (error: grpc.ServiceError | null, reply: any) => (error ? reject(error) : resolve(reply))));
    try {
      const created = await call("CreateWebhookEndpoint", { project_id: String(tenant.projectId), endpoint: { url: "https://example.com/grpc-hook", events: ["article.published"] } });
      expect(created.secret).toMatch(/^whsec_/);
      const listed = await call("ListWebhookEndpoints", { project_id: String(tenant.projectId) });
      const mine = listed.endpoints.find((e: any) => e.id === created.endpoint.id);
      expect(mine).toMatchObject({ url: "https://example.com/grpc-hook", events: ["article.published"], enabled: true });
      expect(JSON.stringify(listed)).not.toContain(created.secret.slice(6));
      await call("DeleteWebhookEndpoint", { project_id: String(tenant.projectId), endpoint_id: created.endpoint.id });
    } finally {
      client.close();
    }
  });
});
