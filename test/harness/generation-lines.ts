// A generation queue and its accounts' lines (kit/src/fair-dispatch.ts) on a real Redis, under a
// prefix of the test's own: made anew before each test of the file and removed after it.
import { afterAll, afterEach, beforeEach } from "bun:test";
import { randomBytes } from "node:crypto";
import type IORedis from "ioredis";
import type { Queue } from "bullmq";
import type { LineEntry } from "../../services/kit/src/fair-dispatch.ts";
import { openQueue, type GenerationJob } from "../../services/kit/src/queues.ts";

export interface GenerationLines {
  prefix: string;
  queue: Queue<GenerationJob>;
  /** The account's articles `<account>-1` to `<account>-<n>`, created in that order after any before. */
  entries(account: string, n: number): LineEntry[];
  /** One article, created after any before. */
  entry(account: string, externalId: string): LineEntry;
}

export function useGenerationLines(redis: IORedis, name: string): GenerationLines {
  let order = 0;
  const lines: GenerationLines = {
    prefix: "",
    queue: undefined as unknown as Queue<GenerationJob>,
    entries: (account, n) => Array.from({ length: n }, (_, i) => lines.entry(account, `${account}-${i + 1}`)),
    entry: (account, externalId) => ({ externalId, account, order: ++order, data: { externalId } }),
  };
  beforeEach(() => {
    lines.prefix = `test-${name}-${randomBytes(4).toString("hex")}`;
    lines.queue = openQueue<GenerationJob>("generation", redis, lines.prefix);
  });
  afterEach(async () => {
    await lines.queue.close();
    const keys = await redis.keys(`${lines.prefix}:*`);
    if (keys.length) await redis.del(...keys);
  });
  afterAll(() => redis.disconnect());
  return lines;
}
