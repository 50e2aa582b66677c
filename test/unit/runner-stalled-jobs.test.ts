// The runner hears of a job BullMQ failed for stalling too often from its own worker's "failed"
// event (services/generation-runner/src/stalled-jobs.ts), against a real Redis: a worker that dies
// with the job leaves it to another, which fails it at once; a job failed by its handler is not one.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import IORedis from "ioredis";
import { Queue, UnrecoverableError, Worker, type Job } from "bullmq";
import { onJobsStalledTooOften } from "../../services/generation-runner/src/stalled-jobs.ts";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const prefix = `test-stalls-${randomBytes(4).toString("hex")}`;
let redis: IORedis;
const queues: Queue[] = [];
const workers: Worker[] = [];

const connection = () => new IORedis(REDIS_URL, { maxRetriesPerRequest: null });
const queue = (name: string) => {
  const q = new Queue(name, { connection: redis, prefix });
  queues.push(q);
  return q;
};
// Allowed no stall at all, so the first worker's death is one too many.
const worker = (name: string, processor: (job: Job) => Promise<unknown>) => {
  const w = new Worker(name, processor, { connection: connection(), prefix, lockDuration: 1000, stalledInterval: 300, maxStalledCount: 0 });
  w.on("error", () => {});
  workers.push(w);
  return w;
};

beforeAll(() => {
  redis = connection();
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.close(true).catch(() => {})));
  await Promise.all(queues.map((q) => q.close()));
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  redis.disconnect();
});

test("a job whose worker died more often than allowed is reported by the worker that failed it", async () => {
  const stalls = queue("stalls");
  await stalls.add("generate", { externalId: "stalled-article" }, { jobId: "stalled-article", attempts: 5 });
  // The first worker takes the job and dies with it: its lock lapses, never renewed.
  let taken!: () => void;
  const takenOnce = new Promise<void>((resolve) => (taken = resolve));
  const dying = worker("stalls", () => (taken(), new Promise(() => {})));
  await takenOnce;
  await dying.close(true);

  const reported: string[] = [];
  let handled = 0;
  const survivor = worker("stalls", async () => void handled++);
  const heard = new Promise<void>((resolve) =>
    onJobsStalledTooOften(survivor, (job) => {
      reported.push((job.data as { externalId: string }).externalId);
      resolve();
    }),
  );
  await Promise.race([heard, Bun.sleep(15_000)]);
  expect(reported).toEqual(["stalled-article"]);
  // Failed for good without its handler running again.
  expect(handled).toBe(0);
  expect(await (await stalls.getJob("stalled-article"))!.getState()).toBe("failed");
}, 30_000);

test("a job its handler failed is not one that stalled", async () => {
  const reported: string[] = [];
  const failing = worker("failures", async () => {
    throw new UnrecoverableError("the article cannot run");
  });
  onJobsStalledTooOften(failing, (job) => reported.push(job.id!));
  const failed = new Promise<void>((resolve) => failing.on("failed", () => resolve()));
  await queue("failures").add("generate", { externalId: "failing-article" }, { jobId: "failing-article" });
  await failed;
  expect(reported).toEqual([]);
});
