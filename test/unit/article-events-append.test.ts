// The article event log's writes (services/kit/src/article-events.ts) against a real Redis: events
// appended together land in order with one renewal of the stream's expiry, on a plain connection
// and on one that pipelines a turn's commands; a final event is not repeated, also once the
// stream has gone to the archive, whose ids a new stream then follows; an archived stream expires
// soon unless an entry came after the archived ones; a write the log refuses is tried again until
// it lands, the article's later writes waiting behind it, and a retried batch is not written twice;
// a run's events land before another process logs the article's end.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import IORedis from "ioredis";
import {
  appendArticleEvents,
  appendEndingEvents,
  articleEventsKey,
  compareStreamIds,
  ENDED_LOG_SECONDS,
  expireArchivedLog,
  readStreamEntry,
  tryAppendArticleEvents,
  type StreamEntry,
} from "../../services/kit/src/article-events.ts";
import { logWritesOf, OrderedLogWrites } from "../../services/kit/src/ordered-log-writes.ts";
import { RunEvents } from "../../services/generation-runner/src/domain/run-events.ts";
import type { Logger } from "../../services/kit/src/logger.ts";
import { eventually } from "../harness/eventually.ts";

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

const logOf = async (externalId: string) => ((await plain.xrange(articleEventsKey(plain, prefix, externalId), "-", "+")) as StreamEntry[]).map(readStreamEntry);

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
  const ttl = await plain.ttl(articleEventsKey(plain, prefix, "a1"));
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
  expect(await plain.exists(articleEventsKey(plain, prefix, "empty"))).toBe(0);
});

test("a final event right after one of the same name is not appended again", async () => {
  const completed = { event: "completed" as const, data: { status: "completed" } };
  await appendArticleEvents(plain, prefix, "f1", [{ event: "state", data: { status: "writing" } }]);
  expect(await appendEndingEvents(pipelining, prefix, "f1", [completed], { unlessRepeated: "completed" })).toBe("appended");
  expect(await appendEndingEvents(pipelining, prefix, "f1", [completed], { unlessRepeated: "completed" })).toBe("repeated");
  await appendEndingEvents(plain, prefix, "f1", [{ event: "published", data: { status: "published" } }], { unlessRepeated: "published" });
  expect((await logOf("f1")).map((e) => e!.event)).toEqual(["state", "completed", "published"]);
});

test("with the stream gone, the end is the archive's: absent until told where it ends, a repeat of it skipped, and new ids after the archive's", async () => {
  const completed = { event: "completed" as const, data: { status: "completed" } };
  expect(await appendEndingEvents(plain, prefix, "gone", [completed], { unlessRepeated: "completed" })).toBe("absent");
  expect(await plain.exists(articleEventsKey(plain, prefix, "gone"))).toBe(0);
  expect(await appendEndingEvents(plain, prefix, "gone", [completed], { unlessRepeated: "completed", archivedEnd: { id: "1000-3", event: "completed" } })).toBe("repeated");
  expect(await plain.exists(articleEventsKey(plain, prefix, "gone"))).toBe(0);

  // An archive that ends later than this server's clock: the new stream starts right after it.
  const ahead = `${Date.now() + 60_000}-7`;
  const publication = { event: "publication" as const, data: { state: "published" } };
  expect(await appendEndingEvents(plain, prefix, "gone", [publication, completed], { archivedEnd: { id: ahead, event: "completed" } })).toBe("appended");
  const ids = (await logOf("gone")).map((e) => e!.id);
  expect(ids[0]).toBe(ahead.replace(/-7$/, "-8"));
  expect(compareStreamIds(ids[1]!, ids[0]!)).toBeGreaterThan(0);
  // An archive that ends in the past: the stream's own ids, later anyway.
  expect(await appendEndingEvents(plain, prefix, "past", [publication], { archivedEnd: { id: "1000-3", event: "completed" } })).toBe("appended");
  expect(compareStreamIds((await logOf("past"))[0]!.id, `${Date.now() - 60_000}-0`)).toBeGreaterThan(0);
});

test("an archived stream expires within ENDED_LOG_SECONDS, unless an entry came after the archived ones", async () => {
  await appendArticleEvents(plain, prefix, "x1", [{ event: "state", data: { status: "writing" } }]);
  await appendEndingEvents(plain, prefix, "x1", [{ event: "completed", data: { status: "completed" } }], { unlessRepeated: "completed" });
  const [last] = (await logOf("x1")).slice(-1);
  await expireArchivedLog(plain, prefix, "x1", last!.id);
  const ttl = await plain.ttl(articleEventsKey(plain, prefix, "x1"));
  expect(ttl).toBeGreaterThan(0);
  expect(ttl).toBeLessThanOrEqual(ENDED_LOG_SECONDS);

  await appendArticleEvents(plain, prefix, "x2", [{ event: "state", data: { status: "writing" } }]);
  const [archivedLast] = await logOf("x2");
  await appendArticleEvents(plain, prefix, "x2", [{ event: "step_finished", data: { step: 1 } }]);
  await expireArchivedLog(plain, prefix, "x2", archivedLast!.id);
  expect(await plain.ttl(articleEventsKey(plain, prefix, "x2"))).toBeGreaterThan(7 * 86_400 - 60);
});

test("a write the log refuses lands once the log takes writes again, and the article's later writes land after it, in order", async () => {
  const key = articleEventsKey(plain, prefix, "refused");
  // The key holding a string: every append to it fails (WRONGTYPE), as a cluster between masters refuses with MOVED.
  await plain.set(key, "not a stream");
  const errors: Error[] = [];
  const onError = (error: Error) => errors.push(error);
  await tryAppendArticleEvents(plain, prefix, "refused", [{ event: "step_started", data: { step: 1 } }], onError);
  await tryAppendArticleEvents(plain, prefix, "refused", [{ event: "step_finished", data: { step: 1 } }], onError);
  // Both callers were let go while the writes wait; the first is being tried again, the second queued behind it.
  expect(logWritesOf(plain).pending).toBe(1);
  expect(await plain.type(key)).toBe("string");
  await plain.del(key);
  await eventually(() => logOf("refused"), (log) => log.length === 2, 10_000, "both batches in the log");
  expect((await logOf("refused")).map((e) => `${e!.event} ${e!.data.step}`)).toEqual(["step_started 1", "step_finished 1"]);
  expect(errors).toEqual([]);
  await eventually(async () => logWritesOf(plain).pending, (n) => n === 0, 5_000, "no write left pending");
});

test("a retried batch that had landed before its error was seen is not written again", async () => {
  const batch = [{ event: "step_finished" as const, data: { step: 2 } }];
  await appendArticleEvents(plain, prefix, "twice", batch, { token: "t-1", retry: false });
  await appendArticleEvents(plain, prefix, "twice", [{ event: "state" as const, data: { status: "writing" } }], { token: "t-2", retry: false });
  await appendArticleEvents(plain, prefix, "twice", batch, { token: "t-1", retry: true });
  // A retry of a batch that never landed is written.
  await appendArticleEvents(plain, prefix, "twice", [{ event: "image" as const, data: { position: 1 } }], { token: "t-3", retry: true });
  expect((await logOf("twice")).map((e) => e!.event)).toEqual(["step_finished", "state", "image"]);
});

test("a write refused for longer than the retry window is given up and reported, and the next one goes on", async () => {
  const writes = new OrderedLogWrites(300);
  const given: string[] = [];
  let attempts = 0;
  const refused = writes.enqueue("g", async () => {
    attempts++;
    throw new Error("CLUSTERDOWN The cluster is down");
  }, (error) => given.push(error.message));
  const next = writes.enqueue("g", async () => undefined, (error) => given.push(error.message));
  await Promise.all([refused, next]);
  expect(given).toEqual(["CLUSTERDOWN The cluster is down"]);
  expect(attempts).toBeGreaterThan(1);
  expect(writes.pending).toBe(0);
});

test("a run's events refused by the log land before the end another process logs: its log never has a step after the final event", async () => {
  const quiet: Logger = { debug() {}, info() {}, warn() {}, error() {} };
  const key = articleEventsKey(plain, prefix, "ending");
  await plain.set(key, "not a stream");
  const events = new RunEvents({ redis: plain, redisPrefix: prefix }, "ending", quiet);
  const step = { stepNumber: 1, stepName: "Draft", batched: false, output: "", completedAt: new Date() };
  events.stepFinished({ ...step, model: "m", usedFallback: false, promptTokens: 1, completionTokens: 1, cost: 0n, waitedMs: 0 }, 0n, 10);
  // `flush` lets the run go on after half a second while the write is tried again; `landed` does not.
  await events.flush();
  const waiting = events.landed().then(() => "landed");
  expect(await Promise.race([waiting, Bun.sleep(0).then(() => "still waiting")])).toBe("still waiting");
  expect(await plain.type(key)).toBe("string");
  await plain.del(key);
  await waiting;
  // What article-store logs at completion (its own connection and queue) comes after the step.
  await appendEndingEvents(pipelining, prefix, "ending", [{ event: "completed", data: { status: "completed" } }], { unlessRepeated: "completed" });
  expect((await logOf("ending")).map((e) => e!.event)).toEqual(["step_finished", "completed"]);
});
