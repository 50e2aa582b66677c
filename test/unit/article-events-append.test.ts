// The article event log's writes (services/kit/src/article-events.ts) against a real Redis: events
// appended together land in order with one renewal of the stream's expiry, on a plain connection
// and on one that pipelines a turn's commands; a final event is not repeated.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import IORedis from "ioredis";
import { appendArticleEvents, appendFinalArticleEvent, articleEventsKey, readStreamEntry, type StreamEntry } from "../../services/kit/src/article-events.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const prefix = `test-event-log-${randomBytes(4).toString("hex")}`;
let plain: IORedis;
let pipelining: IORedis;

beforeAll(() => {
  plain = new IORedis(REDIS_URL);
  pipelining = new IORedis(REDIS_URL, { enableAutoPipelining: true });
});

afterAll(async () => {
  const keys = await plain.keys(`${prefix}:*`);
  if (keys.length > 0) await plain.del(...keys);
  plain.disconnect();
  pipelining.disconnect();
});

const logOf = async (externalId: string) => ((await plain.xrange(articleEventsKey(prefix, externalId), "-", "+")) as StreamEntry[]).map(readStreamEntry);

test("events appended together land in order, and the stream expires a week after its last write", async () => {
  await appendArticleEvents(plain, prefix, "a1", [
    { event: "state", data: { status: "writing", current_step: "Draft" } },
    { event: "step_started", data: { step: 1, name: "Draft" } },
  ]);
  await appendArticleEvents(plain, prefix, "a1", [{ event: "step_finished", data: { step: 1, cost: "0.01" } }]);
  const log = await logOf("a1");
  expect(log.map((e) => [e!.event, e!.data])).toEqual([
    ["state", { status: "writing", current_step: "Draft" }],
    ["step_started", { step: 1, name: "Draft" }],
    ["step_finished", { step: 1, cost: "0.01" }],
  ]);
  const ttl = await plain.ttl(articleEventsKey(prefix, "a1"));
  expect(ttl).toBeGreaterThan(7 * 86_400 - 60);
  expect(ttl).toBeLessThanOrEqual(7 * 86_400);
});

test("many articles' appends made in one turn on a pipelining connection each land whole and in order", async () => {
  const ids = Array.from({ length: 50 }, (_, i) => `p${i}`);
  await Promise.all(ids.map((id) => appendArticleEvents(pipelining, prefix, id, [{ event: "step_started", data: { step: 1, of: id } }, { event: "step_finished", data: { step: 1, of: id } }])));
  for (const id of ids) {
    expect((await logOf(id)).map((e) => `${e!.event} ${e!.data.of}`)).toEqual([`step_started ${id}`, `step_finished ${id}`]);
  }
});

test("no events: nothing is written", async () => {
  await appendArticleEvents(plain, prefix, "empty", []);
  expect(await plain.exists(articleEventsKey(prefix, "empty"))).toBe(0);
});

test("a final event right after one of the same name is not appended again", async () => {
  await appendArticleEvents(plain, prefix, "f1", [{ event: "state", data: { status: "writing" } }]);
  await appendFinalArticleEvent(pipelining, prefix, "f1", { event: "completed", data: { status: "completed" } });
  await appendFinalArticleEvent(pipelining, prefix, "f1", { event: "completed", data: { status: "completed" } });
  await appendFinalArticleEvent(plain, prefix, "f1", { event: "published", data: { status: "published" } });
  expect((await logOf("f1")).map((e) => e!.event)).toEqual(["state", "completed", "published"]);
});
