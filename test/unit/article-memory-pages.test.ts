// The gateway's memory of article records as list pages use it (getMany): records are kept in
// the page's order, concurrent readers share one read, and a change announced while a read is
// under way is never answered from that read to a reader who came after the change. Runs against
// the machine's Redis on a prefix of its own.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import IORedis from "ioredis";
import { create } from "@bufbuild/protobuf";
import { randomBytes } from "node:crypto";
import { ArticleSchema, type Article } from "../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { ArticleMemory } from "../../gateway/src/articles/article-memory.ts";
import { announceArticleChange } from "../../services/kit/src/article-changes.ts";
import { createLogger } from "../../services/kit/src/logger.ts";
import { eventually } from "../harness/eventually.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const prefix = `memory-test-${randomBytes(3).toString("hex")}`;
let subscriber: IORedis;
let publisher: IORedis;
let memory: ArticleMemory;

const article = (id: number, status = "completed"): Article => create(ArticleSchema, { id: BigInt(id), externalId: `00000000-0000-4000-8000-${String(id).padStart(12, "0")}`, status });

/** A lookup that answers the current records of `store`, counting its calls, after `delayMs`. */
function lookupOf(store: Map<bigint, Article>, delayMs = 0) {
  const calls: bigint[][] = [];
  const lookup = async (ids: bigint[]) => {
    calls.push(ids);
    const answer = ids.flatMap((id) => store.get(id) ?? []);
    await Bun.sleep(delayMs);
    return answer;
  };
  return { lookup, calls };
}

/**
 * Announces a change and resolves once the memory has heard it: the memory's handler is the
 * subscriber's first "message" listener, so when a listener added after it hears the message,
 * the memory already has.
 */
async function announceAndWaitHeard(change: { id: bigint; externalId: string }): Promise<void> {
  const message = `${change.id} ${change.externalId}`;
  let onMessage!: (channel: string, heard: string) => void;
  const heard = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the announcement ${message} was not heard within 5 s`)), 5_000);
    onMessage = (_channel, got) => {
      if (got !== message) return;
      clearTimeout(timer);
      resolve();
    };
    subscriber.on("message", onMessage);
  });
  try {
    await announceArticleChange(publisher, prefix, change);
    await heard;
  } finally {
    subscriber.off("message", onMessage);
  }
}

beforeAll(async () => {
  subscriber = new IORedis(REDIS_URL);
  publisher = new IORedis(REDIS_URL);
  memory = new ArticleMemory(subscriber, prefix, createLogger("test"));
  // Listening once the subscription is confirmed.
  await eventually(async () => memory.listening, Boolean, 5_000, "the memory to listen to announcements");
});

afterAll(() => {
  subscriber.disconnect();
  publisher.disconnect();
});

describe("ArticleMemory.getMany", () => {
  test("answers in the page's order, leaves out unknown ids, and remembers what it read", async () => {
    const store = new Map([1, 2, 3].map((id) => [BigInt(id), article(id)]));
    const { lookup, calls } = lookupOf(store);
    expect((await memory.getMany([3n, 99n, 1n, 2n], lookup)).map((a) => a.id)).toEqual([3n, 1n, 2n]);
    expect((await memory.getMany([2n, 3n], lookup)).map((a) => a.id)).toEqual([2n, 3n]);
    expect(calls).toEqual([[3n, 99n, 1n, 2n]]);
  });

  test("concurrent readers of the same records share one read", async () => {
    const store = new Map([11, 12].map((id) => [BigInt(id), article(id)]));
    const { lookup, calls } = lookupOf(store, 30);
    const pages = await Promise.all(Array.from({ length: 8 }, () => memory.getMany([12n, 11n], lookup)));
    for (const page of pages) expect(page.map((a) => a.id)).toEqual([12n, 11n]);
    expect(calls).toHaveLength(1);
  });

  test("a reader after a change never gets a read that started before it", async () => {
    const store = new Map([[21n, article(21, "writing")]]);
    // The first read answers what the store held when it started, and is held until the test lets
    // it end: it is surely still under way when the change is heard.
    let endEarlyRead!: () => void;
    const earlyReadHeld = new Promise<void>((resolve) => (endEarlyRead = resolve));
    const calls: bigint[][] = [];
    const lookup = async (ids: bigint[]) => {
      const n = calls.push(ids);
      const answer = ids.flatMap((id) => store.get(id) ?? []);
      if (n === 1) await earlyReadHeld;
      return answer;
    };
    const early = memory.getMany([21n], lookup);
    expect(calls).toHaveLength(1);
    store.set(21n, article(21, "completed"));
    await announceAndWaitHeard({ id: 21n, externalId: store.get(21n)!.externalId });
    const late = await memory.getMany([21n], lookup);
    expect(late[0]!.status).toBe("completed");
    endEarlyRead();
    expect((await early)[0]!.status).toBe("writing");
    expect(calls).toHaveLength(2);
    // The early read overlapped the change, so it was not remembered over the late one, though it ended last.
    expect((await memory.getMany([21n], lookup))[0]!.status).toBe("completed");
  });

  test("a failed read reaches every reader sharing it and is not remembered", async () => {
    let attempts = 0;
    const failing = async () => {
      attempts++;
      await Bun.sleep(20);
      throw new Error("article-store unavailable");
    };
    const readers = await Promise.allSettled(Array.from({ length: 3 }, () => memory.getMany([31n], failing)));
    for (const reader of readers) expect(reader.status === "rejected" && (reader.reason as Error).message).toBe("article-store unavailable");
    expect(attempts).toBe(1);
    const store = new Map([[31n, article(31)]]);
    expect((await memory.getMany([31n], lookupOf(store).lookup)).map((a) => a.id)).toEqual([31n]);
  });
});
