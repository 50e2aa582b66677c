// The accounts' lines for worker slots (kit/src/fair-dispatch.ts) on a real Redis and a real
// BullMQ queue, under a prefix of this file's own: the order turns are given in, the weights, the
// bound of the waiting list, and what a repeated, removed or half-promoted job does.
import { beforeEach, expect, test } from "bun:test";
import IORedis from "ioredis";
import { FairDispatch, LINE_WAIT_LIMIT_MS } from "../../services/kit/src/fair-dispatch.ts";
import { useGenerationLines } from "../harness/generation-lines.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const redis = new IORedis(REDIS_URL);
const lines = useGenerationLines(redis, "fair");
const { entries, entry } = lines;
let dispatch: FairDispatch;

beforeEach(() => {
  dispatch = new FairDispatch(redis, lines.queue);
});

/** The ids in BullMQ's waiting list, first to be taken first. */
const waitingIds = async () => (await lines.queue.getWaiting()).map((job) => job.id!);

test("a new article's job waits delayed in its account's line until a turn promotes it", async () => {
  await dispatch.enqueue(entries("1", 3));
  expect(await Promise.all(["1-1", "1-2", "1-3"].map((id) => lines.queue.getJobState(id)))).toEqual(["delayed", "delayed", "delayed"]);
  expect((await lines.queue.getJob("1-1"))!.opts.delay).toBe(LINE_WAIT_LIMIT_MS);
  expect(await dispatch.waiting()).toBe(3);
  expect(await dispatch.feed(2)).toBe(2);
  expect(await waitingIds()).toEqual(["1-1", "1-2"]);
  expect(await lines.queue.getJobState("1-3")).toBe("delayed");
  expect(await dispatch.waiting()).toBe(1);
});

test("accounts take turns: an account that arrives behind another's backlog goes next, not after it", async () => {
  await dispatch.enqueue(entries("1", 6));
  await dispatch.enqueue(entries("2", 2));
  expect(await dispatch.feed(5)).toBe(5);
  expect(await waitingIds()).toEqual(["1-1", "2-1", "1-2", "2-2", "1-3"]);
});

test("weights share the turns: 3:1", async () => {
  await dispatch.setWeight("1", 3);
  await dispatch.enqueue(entries("1", 12));
  await dispatch.enqueue(entries("2", 4));
  await dispatch.feed(8);
  const taken = await waitingIds();
  expect(taken.filter((id) => id.startsWith("1-")).length).toBe(6);
  expect(taken.filter((id) => id.startsWith("2-")).length).toBe(2);
  // Within an account, the oldest first.
  expect(taken.filter((id) => id.startsWith("1-"))).toEqual(["1-1", "1-2", "1-3", "1-4", "1-5", "1-6"]);
});

test("no more jobs wait than the free slots a feed is asked for", async () => {
  await dispatch.enqueue(entries("1", 5));
  await dispatch.feed(2);
  expect(await dispatch.feed(3)).toBe(1);
  expect(await dispatch.feed(3)).toBe(0);
  expect((await waitingIds()).length).toBe(3);
});

test("an account idle for a while earns no credit: it rejoins at the fleet's current turn", async () => {
  await dispatch.enqueue(entries("2", 1));
  await dispatch.feed(1);
  await dispatch.enqueue(entries("1", 10));
  await lines.queue.drain();
  await dispatch.feed(4);
  await lines.queue.drain();
  // Account 2 was served long before account 1's four turns: it does not get four in a row now,
  // but one turn (the next: it joins at the current turn), then account 1 goes on.
  await dispatch.enqueue([entry("2", "2-late")]);
  await dispatch.feed(3);
  expect(await waitingIds()).toEqual(["2-late", "1-5", "1-6"]);
});

test("a newcomer joins at the later of the fleet's turn and its own finish tag: emptying a line and refilling it gains no turn", async () => {
  await dispatch.setWeight("b", 3);
  await dispatch.enqueue(entries("b", 6));
  await dispatch.enqueue(entries("a", 1));
  // Both due at the fleet's turn (0); "a" first on the tie. Its line empties: its next would be due at 1.
  await dispatch.feed(1);
  expect(await waitingIds()).toEqual(["a-1"]);
  await lines.queue.drain();
  // Refilled at once, "a" waits for its own finish tag (1): "b", three times its weight, has
  // three turns before it (0, 1/3, 2/3). Joining at the fleet's turn instead, it would go next.
  await dispatch.enqueue([entry("a", "a-2")]);
  await dispatch.feed(4);
  expect(await waitingIds()).toEqual(["b-1", "b-2", "b-3", "a-2"]);
});

test("an article put in line twice waits once; a job gone before its turn is passed over", async () => {
  const three = entries("1", 3);
  await dispatch.enqueue(three);
  await dispatch.enqueue(three);
  expect(await dispatch.waiting()).toBe(3);
  await (await lines.queue.getJob("1-1"))!.remove();
  expect(await dispatch.feed(3)).toBe(2);
  expect(await waitingIds()).toEqual(["1-2", "1-3"]);
  expect(await dispatch.waiting()).toBe(0);
});

test("a job a feeder took from its line but did not promote (it died) is promoted by the next look for overdue promotions", async () => {
  await dispatch.enqueue(entries("1", 1));
  // As a feeder that died after its turn was given: the id noted as being promoted, long ago.
  await redis.zpopmin(lines.queue.toKey("fair:line:1"));
  await redis.zadd(lines.queue.toKey("fair:promoting"), Date.now() - 60_000, "1-1");
  expect(await lines.queue.getJobState("1-1")).toBe("delayed");
  expect(await dispatch.feed(0)).toBe(0);
  expect(await dispatch.promoteOverdue()).toBe(1);
  expect(await lines.queue.getJobState("1-1")).toBe("waiting");
  expect(await redis.zcard(lines.queue.toKey("fair:promoting"))).toBe(0);
});
