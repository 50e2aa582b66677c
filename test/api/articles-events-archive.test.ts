// An ended article's events once its log has left Redis: article-store archived the stream (with
// the publication and published that came after its completion) and the stream expired, yet
// GET /v1/articles/{id}/events and the public gRPC WatchArticle replay it from the start or from
// any event with the very ids, names and data the live stream gave. And what finished articles
// leave in Redis: nothing of their own, against a bound of 1 KB each (event logs and jobs gone).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import IORedis from "ioredis";
import { queuePrefix } from "../../services/kit/src/redis.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { createArticle } from "../harness/articles.ts";
import { eventually } from "../harness/eventually.ts";
import { startReceiver, type Receiver } from "../harness/webhook-receiver.ts";
import { articleEventsKey, ENDED_LOG_SECONDS } from "../../services/kit/src/article-events.ts";
import { articleBody, createWorkflow, marker, waitForArticle } from "./generation-support.ts";
import { openEvents, steppedArticle, type SseEvent } from "./article-events-support.ts";

let stack: TestStack;
let tenant: Tenant;
let api: ApiClient;
let redis: IORedis;
let receiver: Receiver;
let grpcArticles: any;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
  redis = new IORedis(stack.env.REDIS_URL ?? "redis://127.0.0.1:6379");
  receiver = startReceiver();
  const protoRoot = fileURLToPath(new URL("../../proto", import.meta.url));
  const definition = protoLoader.loadSync("articles/api/v1/articles.proto", { includeDirs: [protoRoot], keepCase: true, longs: String, enums: String, defaults: false, oneofs: true });
  grpcArticles = new (grpc.loadPackageDefinition(definition) as any).articles.api.v1.ArticleService(new URL(stack.publicGrpcUrl).host, grpc.credentials.createInsecure());
});

afterAll(() => {
  redis.disconnect();
  receiver.stop();
  grpcArticles?.close();
});

const logKey = (externalId: string) => articleEventsKey(redis, stack.redisPrefix, externalId);

/** Waits until the article's stream has left Redis (archived, then expired). */
const streamGone = (externalId: string) => eventually(() => redis.exists(logKey(externalId)), (n) => n === 0, (ENDED_LOG_SECONDS + 10) * 1000, "the article's stream to leave Redis");

async function replay(id: string, lastEventId?: string): Promise<SseEvent[]> {
  const stream = await openEvents(stack.baseUrl, tenant.token, id, lastEventId ? { lastEventId } : {});
  await stream.done;
  expect(stream.ended).toBe(true);
  return stream.events;
}

/** google.protobuf.Struct (as grpc-js hands it over) as the JSON it stands for. */
const structJson = (struct: any): Record<string, unknown> => Object.fromEntries(Object.entries(struct?.fields ?? {}).map(([k, v]) => [k, valueJson(v)]));
const valueJson = (v: any): unknown =>
  v.kind === "structValue" ? structJson(v.structValue) : v.kind === "listValue" ? (v.listValue.values ?? []).map(valueJson) : v.kind === "nullValue" ? null : v[v.kind];

function watch(request: object): Promise<SseEvent[]> {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${tenant.token}`);
  return new Promise((resolve, reject) => {
    const events: SseEvent[] = [];
    const call = grpcArticles.WatchArticle(request, metadata);
    call.on("data", (e: any) => events.push({ id: e.id, event: e.event, data: structJson(e.data) }));
    call.on("error", reject);
    call.on("end", () => resolve(events));
  });
}

describe("an ended article's log, served from the archive", () => {
  test("after its stream is gone it replays with the live stream's ids, names and data: from the start, from a middle event, after its completion, and its end alone", async () => {
    const hook = receiver.hook();
    const id = (await steppedArticle(api, tenant.projectId, { webhook_url: hook.url })).external_id;

    // The live stream while it runs, read from Redis: every event up to the end it stops at.
    const live = await replay(id, "0-0");
    expect(live.map((e) => e.event)).toEqual(expect.arrayContaining(["step_started", "step_finished", "completed"]));
    expect(live.at(-1)!.event).toBe("completed");
    // Then its webhook publishes it: the stream as Redis holds it, before it goes.
    await waitForArticle(api, id, (a) => a.status === "published");
    const held = ((await redis.xrange(logKey(id), "-", "+")) as [string, string[]][]).map(([entryId, fields]) => ({ id: entryId, event: fields[1], data: JSON.parse(fields[3]!) }));
    expect(held.slice(0, live.length)).toEqual(live);
    const published = held.at(-1)!;
    expect(published.event).toBe("published");

    await streamGone(id);

    expect(await replay(id, "0-0")).toEqual(live);
    const middle = live.find((e) => e.event === "step_finished")!;
    expect(await replay(id, middle.id)).toEqual(live.slice(live.indexOf(middle) + 1));
    expect(await replay(id, live.at(-1)!.id)).toEqual([published]);
    // Without an event id: the article's end alone, under the id of its last logged event.
    const alone = await replay(id);
    expect(alone.map((e) => [e.id, e.event])).toEqual([[published.id, "published"]]);

    // The same over gRPC.
    expect(await watch({ id, last_event_id: middle.id })).toEqual(live.slice(live.indexOf(middle) + 1));
    expect(await watch({ id, last_event_id: live.at(-1)!.id })).toEqual([published]);
    expect((await watch({ id })).map((e) => [e.id, e.event])).toEqual([[published.id, "published"]]);
  }, 60_000);
});

describe("what finished articles leave in Redis", () => {
  test("once finished (published by their webhook, or cancelled), an article keeps at most 1 KB in Redis: here nothing, neither its log nor its jobs", async () => {
    const quick = marker("kept");
    const slow = marker("kept-slow");
    await createWorkflow(api, tenant.projectId, quick, [{ step_name: "Write", user: `[[sim:words=60]]write ${quick}` }]);
    await createWorkflow(api, tenant.projectId, slow, [{ step_name: "Write", user: `[[sim:sleep=20000]]write ${slow}` }]);
    const hook = receiver.hook();
    const published = await Promise.all(Array.from({ length: 8 }, () => createArticle(api, articleBody(tenant.projectId, { article_type: quick, webhook_url: hook.url }))));
    const cancelled = await createArticle(api, articleBody(tenant.projectId, { article_type: slow }));
    await waitForArticle(api, cancelled.external_id, (a) => a.status === "writing");
    expect((await api.post(`/v1/articles/${cancelled.external_id}/cancel`, {})).status).toBe(200);
    const finished = [...published, cancelled];
    for (const a of published) await waitForArticle(api, a.external_id, (x) => x.status === "published");
    await waitForArticle(api, cancelled.external_id, (a) => a.status === "failed");
    await hook.waitForRequests(published.length);
    for (const a of finished) await streamGone(a.external_id);

    // Every key of the stack that is one of these articles' own (its log, its jobs, their locks and logs).
    const ids = finished.map((a) => a.external_id);
    let bytes = 0;
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${stack.redisPrefix}:*`, "COUNT", 1000);
      cursor = next;
      for (const key of keys.filter((k) => ids.some((id) => k.includes(id)))) bytes += Number(await redis.memory("USAGE", key, "SAMPLES", 0));
    } while (cursor !== "0");
    // Nor are they members of a queue's finished sets.
    for (const queue of ["generation", "webhooks"]) {
      for (const set of ["completed", "failed"]) {
        for (const id of ids) expect(await redis.zscore(`${queuePrefix(stack.redisPrefix, false)}:${queue}:${set}`, id)).toBeNull();
      }
    }
    expect(bytes / finished.length).toBeLessThanOrEqual(1024);
    expect(bytes).toBe(0);
  }, 90_000);
});
