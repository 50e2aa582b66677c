// DELETE /v1/articles/{id} and gRPC's DeleteArticle: an article with research, images, a
// humanized and an edited version, a delivered webhook and its event log is erased from every
// service: afterwards no row of any service's tables and no Redis key holds its external_id or
// its content, its image URLs answer 404, it is 404 by id and external_id and absent from lists,
// and the ledger keeps the words billed with nothing reserved. What stays is an erasure record
// without content. A repeat answers the same; a read-only key cannot delete; a running article is
// cancelled and its reservation given back.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as grpc from "@grpc/grpc-js";
import IORedis from "ioredis";
import postgres from "postgres";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, operatorClient, type Tenant } from "../harness/tenants.ts";
import { createArticle } from "../harness/articles.ts";
import { closeClients, publicClients, type PublicClients } from "../harness/public-grpc.ts";
import { grpcOutcome } from "./reach-support.ts";
import { articleBody, createWorkflow, marker, waitForArticle, webhookReceiver, wordUsage } from "./generation-support.ts";
import { openEvents } from "./article-events-support.ts";
import { eventually } from "../harness/eventually.ts";
import { runAdmin } from "../harness/admin-cli.ts";

const SCHEMAS = ["article_store", "generation_runner", "accounts_billing", "webhook_dispatcher", "workflow_catalog"];

let stack: TestStack;
let tenant: Tenant;
let api: ApiClient;
let clients: PublicClients;
let sql: postgres.Sql;
let redis: IORedis;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
  clients = publicClients(Number(new URL(stack.publicGrpcUrl).port));
  sql = postgres(stack.databaseUrl, { max: 2, onnotice: () => {} });
  redis = new IORedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
});

afterAll(async () => {
  closeClients(clients);
  await sql.end();
  redis.disconnect();
});

/** Every table row of every service that mentions `needle`, as "schema.table". */
async function rowsHolding(needle: string): Promise<string[]> {
  const tables = await sql<{ schema: string; name: string }[]>`
    select table_schema as schema, table_name as name from information_schema.tables
    where table_schema = any(${SCHEMAS}) and table_type = 'BASE TABLE'`;
  const found: string[] = [];
  for (const { schema, name } of tables) {
    const [{ n }] = await sql.unsafe(`select count(*)::int as n from "${schema}"."${name}" t where position($1 in t::text) > 0`, [needle]);
    if (n > 0) found.push(`${schema}.${name}`);
  }
  return found;
}

/** Every Redis key of the stack whose name or value mentions `needle`. */
async function keysHolding(needle: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${stack.redisPrefix}:*`, "COUNT", 500);
    cursor = next;
    for (const key of keys) {
      const type = await redis.type(key);
      const value =
        type === "string" ? await redis.get(key)
        : type === "hash" ? JSON.stringify(await redis.hgetall(key))
        : type === "list" ? JSON.stringify(await redis.lrange(key, 0, -1))
        : type === "set" ? JSON.stringify(await redis.smembers(key))
        : type === "zset" ? JSON.stringify(await redis.zrange(key, "0", "-1"))
        : type === "stream" ? JSON.stringify(await redis.xrange(key, "-", "+"))
        : "";
      if (key.includes(needle) || (value ?? "").includes(needle)) found.push(key);
    }
  } while (cursor !== "0");
  return found;
}

const metadataOf = (token: string) => {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${token}`);
  return metadata;
};

describe("deleting an article", () => {
  test("erases it from every service and Redis; the ledger keeps the billed words; a repeat answers the same", async () => {
    const hook = webhookReceiver();
    let article: any;
    try {
      const created = await createArticle(api, articleBody(tenant.projectId, { title: "Grinding for espresso", target_keyword: "espresso grind size", research_enabled: true, citations: "list", image_count: 1, humanize: true, webhook_url: hook.url }));
      article = await waitForArticle(api, created.external_id, (a) => (a.status === "published" && a.ai_detection_score !== null) || a.status === "failed", 90_000);
      expect(article.status).toBe("published");
      await eventually(async () => hook.received.length, (n) => n > 0, 10_000, "the webhook");
    } finally {
      hook.stop();
    }
    const edited = await api.patch(`/v1/articles/${article.external_id}`, { content: `${article.content}\n\nA closing line only this article has: zebra-quartz-lantern.` }, { headers: { "if-match": `"${article.current_version_id}"` } });
    expect(edited.status).toBe(200);
    article = edited.body.data;
    const imageUrl = new URL(article.images[0].url);
    expect((await fetch(`${stack.baseUrl}${imageUrl.pathname}`)).status).toBe(200);
    const billedBefore = await eventually(async () => wordUsage(stack, tenant.accountId), (u) => Number(u.reservedWords) === 0, 10_000, "the settled ledger");
    // Before: the article is everywhere.
    expect((await rowsHolding(article.external_id)).length).toBeGreaterThan(3);
    expect((await rowsHolding("zebra-quartz-lantern")).length).toBeGreaterThan(0);
    // Its event log's stream, renewed by the edit's version_created.
    expect((await keysHolding(article.external_id)).length).toBeGreaterThan(0);

    const reader = await operatorClient(stack).createApiKey({ accountId: BigInt(tenant.accountId), userId: BigInt(tenant.userId), scope: { accountOnly: false, projectIds: [], readOnly: true } });
    expect((await api.withToken(reader.token).delete(`/v1/articles/${article.external_id}`)).status).toBe(403);
    expect((await api.delete(`/v1/articles/${article.external_id}?unpublish=yes`)).status).toBe(422);

    const res = await api.delete(`/v1/articles/${article.external_id}`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, message: expect.stringContaining("deleted") });

    expect((await api.get(`/v1/articles/${article.external_id}`)).status).toBe(404);
    expect((await api.get(`/v1/articles/${article.id}`)).status).toBe(404);
    expect((await api.get(`/v1/articles/${article.external_id}/versions`)).status).toBe(404);
    expect((await api.get(`/v1/articles?per_page=100`)).body.data.map((a: any) => a.id)).not.toContain(article.id);
    expect((await fetch(`${stack.baseUrl}${imageUrl.pathname}`)).status).toBe(404);

    expect(await rowsHolding(article.external_id)).toEqual([]);
    expect(await rowsHolding("zebra-quartz-lantern")).toEqual([]);
    expect(await keysHolding(article.external_id)).toEqual([]);
    expect(await keysHolding("zebra-quartz-lantern")).toEqual([]);

    // The ledger: the billed words stay, nothing is reserved.
    const billedAfter = await wordUsage(stack, tenant.accountId);
    expect(Number(billedAfter.usedWords)).toBe(Number(billedBefore.usedWords));
    expect(Number(billedAfter.reservedWords)).toBe(0);
    const [erasure] = await sql`select * from article_store.article_erasures where article_id = ${article.id}`;
    expect(erasure).toMatchObject({ account_id: String(tenant.accountId), project_id: String(tenant.projectId), erased_by_key_id: String(tenant.keyId) });
    expect(Number(erasure!.words_billed)).toBe(Number(billedAfter.usedWords));

    // A repeat, by either id, answers the same; another account's key still gets 404.
    expect((await api.delete(`/v1/articles/${article.external_id}`)).body).toEqual(res.body);
    expect((await api.delete(`/v1/articles/${article.id}`)).status).toBe(200);
    const other = await createTenant(stack);
    expect((await apiClient(stack.baseUrl, other.token).delete(`/v1/articles/${article.external_id}`)).status).toBe(404);
  }, 120_000);

  test("over gRPC, a running article is cancelled and erased: its finished step's words billed, the rest of its reservation given back", async () => {
    const m = marker("erase-running");
    const type = marker("erased-running");
    await createWorkflow(api, tenant.projectId, type, [{ user: `[[sim:echo]]alpha beta ${m}` }, { user: `[[sim:sleep=600000]]never ${m}` }]);
    const before = await wordUsage(stack, tenant.accountId);
    const created = await createArticle(api, articleBody(tenant.projectId, { title: "Still being written", article_type: type }));
    const stream = await openEvents(stack.baseUrl, tenant.token, created.external_id, { lastEventId: "0-0" });
    await stream.until((e) => e.event === "step_started" && e.data.step === 2);
    stream.close();
    const deleted = await grpcOutcome(clients, "ArticleService", "DeleteArticle", { id: created.external_id }, metadataOf(tenant.token));
    expect(deleted.code).toBe("OK");
    expect(deleted.reply).toMatchObject({ success: true });
    expect((await api.get(`/v1/articles/${created.external_id}`)).status).toBe(404);
    expect((await grpcOutcome(clients, "ArticleService", "GetArticle", { id: created.external_id }, metadataOf(tenant.token))).code).toBe("NOT_FOUND");
    const after = await eventually(async () => wordUsage(stack, tenant.accountId), (u) => Number(u.reservedWords) === 0, 10_000, "nothing reserved");
    // Step 1's three words were billed when the cancel stopped the run; the rest was given back.
    expect(Number(after.usedWords) - Number(before.usedWords)).toBe(3);
    expect(await rowsHolding(created.external_id)).toEqual([]);
    expect(await keysHolding(created.external_id)).toEqual([]);
  }, 60_000);

  test("the operator erases on request with `article erase`, and again answers the same record", async () => {
    const created = await createArticle(api, articleBody(tenant.projectId, { title: "Erased on request" }));
    const done = await waitForArticle(api, created.external_id, (a) => ["completed", "published", "failed"].includes(a.status));
    const erased = await runAdmin(stack, "article", "erase", "--id", String(done.id));
    expect(erased.code).toBe(0);
    expect(erased.json).toMatchObject({ article_id: done.id, account_id: tenant.accountId, project_id: tenant.projectId, words_billed: expect.any(Number) });
    expect(erased.json.erased_by_key_id).toBeUndefined();
    expect((await api.get(`/v1/articles/${created.external_id}`)).status).toBe(404);
    expect(await rowsHolding(created.external_id)).toEqual([]);
    const again = await runAdmin(stack, "article", "erase", "--id", created.external_id);
    expect(again.json).toEqual(erased.json);
  }, 60_000);
});
