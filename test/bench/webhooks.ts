// P5: completion webhooks one dispatcher delivers per second to a local receiver that answers 200
// at once. The deliveries pile up while the dispatcher is stopped, then it is started and drains
// them; beside it, Bun's fetch POSTing bodies of the same size straight to the receiver at the
// dispatcher's concurrency. The stack must allow private URLs (ALLOW_PRIVATE_URLS=true).
import { loadDispatcherSettings } from "../../services/webhook-dispatcher/src/config.ts";
import type { BenchContext } from "./context.ts";
import type { Figure } from "./measure.ts";
import { benchWorkflow, createBenchArticle, waitForArticles } from "./workflows.ts";

const CREATION_CONCURRENCY = 16;

export interface CountingReceiver {
  url: string;
  received: () => number;
  /** performance.now() of the first and the latest request. */
  first: () => number;
  last: () => number;
  bodyBytes: () => number;
  reset(): void;
  stop(): void;
}

export function countingReceiver(): CountingReceiver {
  let count = 0;
  let first = 0;
  let last = 0;
  let bytes = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const body = await req.arrayBuffer();
      const now = performance.now();
      if (count++ === 0) first = now;
      last = now;
      bytes = body.byteLength;
      return new Response("ok");
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/hooks/bench`,
    received: () => count,
    first: () => first,
    last: () => last,
    bodyBytes: () => bytes,
    reset() {
      count = 0;
      first = last = 0;
    },
    stop: () => server.stop(true),
  };
}

async function until(done: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  while (!(await done())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(2);
  }
  return performance.now();
}

export async function measureWebhookDeliveries(ctx: BenchContext, count = 2000): Promise<Figure[]> {
  const concurrency = loadDispatcherSettings(ctx.stack.env).concurrency;
  const articleType = await benchWorkflow(ctx, "webhook_quick", ["[[sim:words=300]] Write about {title}."]);
  const receiver = countingReceiver();
  try {
    // Completed articles whose webhooks wait in the queue while the dispatcher is stopped.
    await ctx.stack.kill("webhookDispatcher", "SIGTERM");
    const ids: number[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: CREATION_CONCURRENCY }, async () => {
        while (next < count) {
          const i = next++;
          ids.push((await createBenchArticle(ctx, articleType, `Delivered article ${i}`, { target_word_count: 300, webhook_url: receiver.url })).id);
        }
      }),
    );
    await waitForArticles(ctx, ids, "completed");
    const queued = async () => Number((await ctx.sql`select count(*)::int as n from generation_runner.runs where webhook_enqueued_at is not null and finished_at is not null`)[0]!.n) >= count;
    await until(queued, 60_000, "every webhook enqueued");

    const started = performance.now();
    await ctx.stack.start("webhookDispatcher");
    const ready = performance.now();
    const allReceived = await until(() => receiver.received() >= count, 300_000, `${count} webhooks at the receiver`);
    const published = await until(
      async () => Number((await ctx.sql`select count(*)::int as n from article_store.articles where id in ${ctx.sql(ids)} and status = 'published'`)[0]!.n) >= count,
      300_000,
      `${count} articles published`,
    );
    const spread = (receiver.last() - receiver.first()) / 1000;
    const perSecond = (count - 1) / spread;
    const bytes = receiver.bodyBytes();

    // Baseline: the same number of POSTs of the same size from Bun's fetch at the same concurrency.
    const body = JSON.stringify({ padding: "x".repeat(Math.max(0, bytes - 16)) });
    receiver.reset();
    let sent = 0;
    const baselineStarted = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (sent < count) {
          sent++;
          const res = await fetch(receiver.url, { method: "POST", headers: { "content-type": "application/json" }, body });
          await res.arrayBuffer();
        }
      }),
    );
    const baseline = count / ((performance.now() - baselineStarted) / 1000);

    return [
      {
        id: "P5 webhooks",
        what: `${count} completion webhooks (${bytes} B) drained by one dispatcher, concurrency ${concurrency}, first to last arrival`,
        value: perSecond,
        unit: "deliveries/s",
        baseline: { what: `Bun fetch POSTs of ${bytes} B straight to the receiver, ${concurrency} concurrent`, value: baseline },
        goal: "≥ 1,000 deliveries/s",
        met: perSecond >= 1000,
        detail: {
          "from start s": (allReceived - started) / 1000,
          "dispatcher start s": (ready - started) / 1000,
          "all published after start s": (published - started) / 1000,
        },
      },
    ];
  } finally {
    receiver.stop();
    if (ctx.stack.processes.get("webhookDispatcher")?.exitCode !== null) await ctx.stack.start("webhookDispatcher").catch(() => {});
  }
}
