// P9: what a finished article leaves in Redis. A stack of its own on a private Redis (so
// used_memory counts nothing else) and a private Postgres (so it takes none of the connections of
// the bench's server) generates N one-step articles with completion webhooks; their
// webhooks wait while the dispatcher is stopped (the baseline: the same articles as live work),
// then it delivers them all. The figure is used_memory's growth over the run divided by N, read
// once nothing is left to do and the ended articles' streams have expired (it is also read at the
// last webhook), after a warm-up of a few articles; the growth is also split by kind of key
// (MEMORY USAGE of every key), so the detail says where the bytes are.
import IORedis from "ioredis";
import { startPrivatePostgres, startPrivateRedis } from "../../deploy/local/private-servers.ts";
import { ENDED_LOG_SECONDS } from "../../services/kit/src/article-events.ts";
import { openQueue, type QueueName } from "../../services/kit/src/queues.ts";
import { openBenchStack, type BenchContext, type BenchStack } from "./context.ts";
import type { Figure } from "./measure.ts";
import { countingReceiver } from "./webhooks.ts";
import { benchWorkflow, createBenchArticle } from "./workflows.ts";

const CREATION_CONCURRENCY = 16;
const WARM_UP_ARTICLES = 20;
const GOAL_BYTES = 1024;

async function usedMemory(redis: IORedis): Promise<number> {
  return Number(/^used_memory:(\d+)/m.exec(await redis.info("memory"))![1]);
}

/** Bytes of every key of the stack's prefix by kind (MEMORY USAGE, whole values). */
async function keyCensus(redis: IORedis, prefix: string): Promise<Record<string, number>> {
  const kinds: Record<string, number> = {};
  const kindOf = (key: string) => {
    const rest = key.slice(prefix.length + 1);
    if (rest.startsWith("article-events:")) return "event logs";
    const job = /^(?:bull|\{[^}]*\}):([^:]+):(.+)$/.exec(rest);
    if (job && job[2] === "events") return `${job[1]} queue's event log`;
    // A job's hash (and its :logs, :lock): ids are external_ids, or publishingJobId's form.
    if (job && /^[0-9a-f]{8}-[0-9a-f-]{27}/.test(job[2]!)) return `${job[1]} jobs`;
    return "other";
  };
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
    cursor = next;
    const sizes = await Promise.all(keys.map((key) => redis.memory("USAGE", key, "SAMPLES", 0)));
    keys.forEach((key, i) => (kinds[kindOf(key)] = (kinds[kindOf(key)] ?? 0) + Number(sizes[i] ?? 0)));
  } while (cursor !== "0");
  return kinds;
}

async function until(done: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await done())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(250);
  }
}

/** Each kind's growth from `before` to `after`, per article. */
const grownPerArticle = (after: Record<string, number>, before: Record<string, number>, articles: number) =>
  Object.fromEntries(Object.entries(after).map(([kind, bytes]) => [`${kind} B/article`, (bytes - (before[kind] ?? 0)) / articles]));

export async function measureRedisPerFinishedArticle(seconds: number, articles: number): Promise<Figure[]> {
  const [redisServer, postgresServer] = await Promise.all([startPrivateRedis(), startPrivatePostgres()]);
  const receiver = countingReceiver();
  const redis = new IORedis(redisServer.url);
  let bench: BenchStack | undefined;
  try {
    bench = await openBenchStack({ seconds, env: { REDIS_URL: redisServer.url }, postgresServer: postgresServer.url("postgres") });
    const ctx: BenchContext = await bench.tenant();
    const articleType = await benchWorkflow(ctx, "redis_footprint", ["[[sim:words=100]] Write about {title}."]);
    const counts = async () => {
      const [row] = await ctx.sql<{ finished: number; published: number; failed: number }[]>`
        select count(*) filter (where status in ('completed', 'published'))::int as finished,
               count(*) filter (where status = 'published')::int as published,
               count(*) filter (where status = 'failed')::int as failed
        from article_store.articles`;
      if (row!.failed > 0) throw new Error(`${row!.failed} articles failed`);
      return row!;
    };
    const queues = (["generation", "webhooks"] as QueueName[]).map((name) => openQueue(name, redis, ctx.redisPrefix));
    const idle = async () => {
      const pending = await Promise.all(queues.map((q) => q.getJobCounts("waiting", "prioritized", "delayed", "active")));
      return pending.every((c) => Object.values(c).every((n) => n === 0));
    };

    let made = 0;
    let retried = 0;
    // As a client told "retry with backoff" does: a long run on a shared machine meets a slow moment.
    const createOne = async (title: string) => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await createBenchArticle(ctx, articleType, title, { webhook_url: receiver.url });
        } catch (error) {
          if (attempt >= 5 || !/: 503 /.test((error as Error).message)) throw error;
          retried++;
          await Bun.sleep(1000 * attempt);
        }
      }
    };
    const create = async (count: number) => {
      const target = made + count;
      await Promise.all(
        Array.from({ length: CREATION_CONCURRENCY }, async () => {
          while (made < target) await createOne(`Kept article ${made++}`);
        }),
      );
    };
    /** Until every article so far is published, its webhook received, and the queues have nothing left to do. */
    const delivered = async () => {
      await until(async () => (await counts()).published >= made && receiver.received() >= made, 30 * 60_000, `${made} webhooks delivered`);
      await until(idle, 60_000, "the queues to have nothing left to do");
    };
    // An ended article's stream leaves Redis ENDED_LOG_SECONDS after article-store archived it.
    const streamsExpired = () => Bun.sleep((ENDED_LOG_SECONDS + 5) * 1000);

    // A few articles first, through the whole path: the scripts Redis caches and the queues' own
    // keys are the stack's, not the measured articles'. Then a reading with every process
    // connected, as at the end (a client's connection holds memory too).
    await create(WARM_UP_ARTICLES);
    await delivered();
    await streamsExpired();
    const before = await usedMemory(redis);
    const beforeKinds = await keyCensus(redis, ctx.redisPrefix);

    await ctx.stack.kill("webhookDispatcher", "SIGTERM");
    const started = performance.now();
    await create(articles);
    const created = performance.now();
    await until(async () => (await counts()).finished >= made, 30 * 60_000, `${made} articles completed`);
    const enqueued = async () => Number((await ctx.sql`select count(*)::int as n from generation_runner.runs where webhook_enqueued_at is not null and finished_at is not null`)[0]!.n) >= made;
    await until(enqueued, 5 * 60_000, "every webhook enqueued");
    const waiting = await usedMemory(redis);
    const waitingKinds = await keyCensus(redis, ctx.redisPrefix);

    await ctx.stack.start("webhookDispatcher");
    await delivered();
    const allDelivered = performance.now();
    const atLastWebhook = await usedMemory(redis);
    await streamsExpired();
    const finished = await usedMemory(redis);
    const finishedKinds = await keyCensus(redis, ctx.redisPrefix);
    await Promise.all(queues.map((q) => q.close()));

    const value = (finished - before) / articles;
    const grown = grownPerArticle(finishedKinds, beforeKinds, articles);
    const inKeys = Object.values(grown).reduce((a, b) => a + b, 0);
    return [
      {
        id: "P9 Redis per finished article",
        what: `${articles} one-step articles with completion webhooks on a private Redis: used_memory's growth over the run / articles, once their streams expired after the last webhook`,
        value,
        unit: "B",
        baseline: { what: "the same articles while their completion webhooks wait in the queue (live work)", value: (waiting - before) / articles },
        goal: `≤ ${GOAL_BYTES.toLocaleString("en-US")} B`,
        met: value <= GOAL_BYTES,
        detail: {
          "at the last webhook B/article": (atLastWebhook - before) / articles,
          ...grown,
          "outside the stack's keys B/article": value - inKeys,
          "waiting: event logs B/article": ((waitingKinds["event logs"] ?? 0) - (beforeKinds["event logs"] ?? 0)) / articles,
          "creation s": (created - started) / 1000,
          "all delivered after s": (allDelivered - started) / 1000,
          "creations retried after a 503": retried,
        },
      },
    ];
  } finally {
    redis.disconnect();
    receiver.stop();
    await bench?.close();
    await Promise.all([redisServer.cleanup(), postgresServer.cleanup()]);
  }
}
