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

beforeAll(async () => {
  subscriber = new IORedis(REDIS_URL);
  publisher = new IORedis(REDIS_URL);
  memory = new ArticleMemory(subscriber, prefix, createLogger("test"));
  // Listening once the subscription is confirmed.
  const deadline = Date.now() + 5000;
  while (!memory.listening && Date.now() < deadline) await Bun.sleep(10);
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
    const { lookup, calls } = lookupOf(store, 100);
    const early = memory.getMany([21n], lookup);
    await Bun.sleep(20);
    store.set(21n, article(21, "completed"));
    await announceArticleChange(publisher, prefix, { id: 21n, externalId: store.get(21n)!.externalId });
    await Bun.sleep(20); // the announcement reaches the gateway
    const late = await memory.getMany([21n], lookup);
    expect(late[0]!.status).toBe("completed");
    expect((await early)[0]!.status).toBe("writing");
    expect(calls).toHaveLength(2);
    // The early read overlapped the change, so it was not remembered: the next reader reads again.
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
