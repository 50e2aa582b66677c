// P3: what the runner adds around each step of a 10-step workflow whose model answers at once,
// beside the simulator's own latency per chat completion. P4: 1,000 articles of two 2 s model
// calls created at once on one runner process, beside the same calls made straight to the
// simulator, with the runner's peak resident memory.
import http from "node:http";
import IORedis from "ioredis";
import { articleChangesChannel, readArticleChange } from "../../services/kit/src/article-changes.ts";
import type { BenchContext } from "./context.ts";
import { startRunnerReplicas } from "../harness/runner-replicas.ts";
import { rssMiB, type Figure } from "./measure.ts";
import { benchWorkflow, createBenchArticle, waitForArticles } from "./workflows.ts";

const STEPS = 10;
const ORCHESTRATED_ARTICLES = 5;
const CREATION_CONCURRENCY = 16;
const MODEL_SLEEP_MS = 2000;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
};

/** Waits until the runner has finished the article's run, hand-offs included. */
async function runFinished(ctx: BenchContext, externalId: string): Promise<void> {
  for (let i = 0; i < 30_000; i++) {
    const [row] = await ctx.sql<{ finished: boolean }[]>`select finished_at is not null as finished from generation_runner.runs where external_id = ${externalId}`;
    if (row?.finished) return;
    await Bun.sleep(2);
  }
  throw new Error(`the run of ${externalId} did not finish`);
}

/**
 * Resolves when the article reached completed: its status is read again on every change
 * article-store announces for it (and every 10 ms in case an announcement is missed), so waiting
 * adds next to no load to the stack being measured.
 */
async function completedAfter(ctx: BenchContext, changes: ArticleChanges, id: number, timeoutMs = 60_000): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const changed = changes.next(id, 10);
    const [row] = await ctx.sql<{ status: string }[]>`select status from article_store.articles where id = ${id}`;
    if (row?.status === "failed") throw new Error(`article ${id} failed`);
    if (row?.status === "completed" || row?.status === "published") return performance.now();
    if (performance.now() > deadline) throw new Error(`article ${id} did not complete within ${timeoutMs} ms`);
    await changed;
  }
}

interface ArticleChanges {
  /** Resolves on the next announced change of the article, or after waitMs. */
  next(id: number, waitMs: number): Promise<void>;
  close(): void;
}

async function listenForChanges(ctx: BenchContext): Promise<ArticleChanges> {
  const redis = new IORedis(ctx.stack.env.REDIS_URL ?? "redis://127.0.0.1:6379");
  const waiting = new Map<number, () => void>();
  await redis.subscribe(articleChangesChannel(ctx.redisPrefix));
  redis.on("message", (_channel: string, message: string) => {
    const changed = readArticleChange(message);
    if (changed) waiting.get(Number(changed.id))?.();
  });
  return {
    next: (id, waitMs) =>
      new Promise<void>((resolve) => {
        const timer = setTimeout(done, waitMs);
        function done() {
          clearTimeout(timer);
          waiting.delete(id);
          resolve();
        }
        waiting.set(id, done);
      }),
    close: () => redis.disconnect(),
  };
}

/** One chat completion straight to the simulator, as the runner's SDK sends it. */
function simulatorCall(ctx: BenchContext, user: string): () => Promise<void> {
  const url = `${ctx.stack.simulatorUrl}/v1/chat/completions`;
  const body = JSON.stringify({ model: "sim-fast", temperature: 0.7, messages: [{ role: "system", content: "You write articles." }, { role: "user", content: user }] });
  return async () => {
    const res = await fetch(url, { method: "POST", headers: { authorization: "Bearer simulator", "content-type": "application/json" }, body });
    if (res.status !== 200) throw new Error(`simulator answered ${res.status}`);
    await res.json();
  };
}

/** `count` chat completions straight to the simulator, all in flight at once. */
async function simulatorCallsAtOnce(ctx: BenchContext, user: string, count: number): Promise<void> {
  const url = new URL(`${ctx.stack.simulatorUrl}/v1/chat/completions`);
  const body = JSON.stringify({ model: "sim-fast", temperature: 0.7, messages: [{ role: "system", content: "You write articles." }, { role: "user", content: user }] });
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const once = () =>
    new Promise<void>((resolve, reject) => {
      const req = http.request(url, { method: "POST", agent, headers: { authorization: "Bearer simulator", "content-type": "application/json", "content-length": Buffer.byteLength(body) } }, (res) => {
        res.on("data", () => {});
        res.on("end", () => (res.statusCode === 200 ? resolve() : reject(new Error(`simulator answered ${res.statusCode}`))));
      });
      req.on("error", reject);
      req.end(body);
    });
  try {
    await Promise.all(Array.from({ length: count }, once));
  } finally {
    agent.destroy();
  }
}

export async function measureOrchestration(ctx: BenchContext): Promise<Figure[]> {
  const prompts = Array.from({ length: STEPS }, (_, i) => `[[sim:echo]] Step ${i + 1} of an article about {title}.`);
  const articleType = await benchWorkflow(ctx, "ten_echo_steps", prompts);

  // Baseline: the simulator's own latency per call, sequential, warmed up first.
  const call = simulatorCall(ctx, "[[sim:echo]] Step 1 of an article about orchestration.");
  for (let i = 0; i < 20; i++) await call();
  const direct: number[] = [];
  for (let i = 0; i < 100; i++) {
    const t = performance.now();
    await call();
    direct.push(performance.now() - t);
  }

  // One warm-up article (connections, prepared statements), then the measured ones one at a time,
  // each after the previous run's hand-offs (originality, settlement) are done.
  const changes = await listenForChanges(ctx);
  const perStep: number[] = [];
  const totals: number[] = [];
  const creations: number[] = [];
  try {
    const warmUp = await createBenchArticle(ctx, articleType, "Orchestration warm-up");
    await completedAfter(ctx, changes, warmUp.id);
    await runFinished(ctx, warmUp.externalId);
    for (let i = 0; i < ORCHESTRATED_ARTICLES; i++) {
      const posted = performance.now();
      const created = await createBenchArticle(ctx, articleType, `Orchestrated article ${i}`);
      const started = performance.now();
      creations.push(started - posted);
      const total = (await completedAfter(ctx, changes, created.id)) - started;
      totals.push(total);
      perStep.push(total / STEPS);
      await runFinished(ctx, created.externalId);
    }
  } finally {
    changes.close();
  }
  const value = median(perStep);
  return [
    {
      id: "P3 orchestration",
      what: `${STEPS}-step custom workflow, model answering at once: (created → completed) / ${STEPS}, median of ${ORCHESTRATED_ARTICLES} articles one at a time`,
      value,
      unit: "ms/step",
      baseline: { what: "simulator chat completion called directly (median)", value: median(direct) },
      goal: "≤ 5 ms per step",
      met: value <= 5,
      detail: { "articles ms": totals.map((t) => Math.round(t)).join(" "), "POST ms": creations.map((t) => Math.round(t)).join(" "), "min ms/step": Math.min(...perStep), "max ms/step": Math.max(...perStep) },
    },
  ];
}

/** Creates `articles` articles, CREATION_CONCURRENCY at a time, titled "<title> <n>": their ids. */
async function createBurst(ctx: BenchContext, articleType: string, title: string, articles: number): Promise<number[]> {
  const ids: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CREATION_CONCURRENCY }, async () => {
      while (next < articles) ids.push((await createBenchArticle(ctx, articleType, `${title} ${next++}`)).id);
    }),
  );
  return ids;
}

/** Bursts P4 times; its figure is the median one. */
const BURSTS = 3;

export async function measureRunnerInFlight(ctx: BenchContext, articles = 1000): Promise<Figure[]> {
  const prompts = [1, 2].map((n) => `[[sim:sleep=${MODEL_SLEEP_MS}]] Part ${n} about {title}.`);
  const articleType = await benchWorkflow(ctx, "two_slow_steps", prompts);
  const runner = ctx.stack.processes.get("generationRunner")!;

  // Baseline: the same number of 2 s calls made straight to the simulator at once (over node:http:
  // Bun's fetch would queue all but 256 of them).
  const directStarted = performance.now();
  await simulatorCallsAtOnce(ctx, `[[sim:sleep=${MODEL_SLEEP_MS}]] Part 1 about the baseline.`, articles);
  const directSeconds = (performance.now() - directStarted) / 1000;

  let peakRss = rssMiB(runner.pid) ?? 0;
  const rssBefore = peakRss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMiB(runner.pid) ?? 0)), 100);
  try {
    // Three bursts, one after another has completed; the figure is the median burst (a single
    // burst moved by a third from run to run on a shared machine).
    const bursts: { seconds: number; creationSeconds: number }[] = [];
    for (let burst = 0; burst < BURSTS; burst++) {
      const started = performance.now();
      const ids = await createBurst(ctx, articleType, `In flight ${burst}`, articles);
      const creationSeconds = (performance.now() - started) / 1000;
      const completedAt = await waitForArticles(ctx, ids, "completed");
      bursts.push({ seconds: (completedAt - started) / 1000, creationSeconds });
    }
    peakRss = Math.max(peakRss, rssMiB(runner.pid) ?? 0);
    const { seconds, creationSeconds } = [...bursts].sort((a, b) => a.seconds - b.seconds)[Math.floor(BURSTS / 2)]!;
    const bound = 1.1 * ((2 * MODEL_SLEEP_MS) / 1000 + creationSeconds);
    return [
      {
        id: "P4 in flight",
        what: `${articles} articles of 2 steps × ${MODEL_SLEEP_MS / 1000} s model latency on one runner, created ${CREATION_CONCURRENCY} at a time, all completed after (the median of ${BURSTS} bursts)`,
        value: seconds,
        unit: "s",
        baseline: { what: `${articles} ${MODEL_SLEEP_MS / 1000} s calls straight to the simulator at once`, value: directSeconds },
        goal: `≤ 1.1 × (4 s + creation) = ${bound.toFixed(1)} s, runner RSS ≤ 300 MiB`,
        met: seconds <= bound && peakRss <= 300,
        detail: {
          "creation s": creationSeconds,
          "bursts s": bursts.map((b) => b.seconds.toFixed(2)).join(" / "),
          "bursts' creation s": bursts.map((b) => b.creationSeconds.toFixed(2)).join(" / "),
          "runner peak RSS MiB": peakRss,
          "runner RSS before MiB": rssBefore,
        },
      },
    ];
  } finally {
    clearInterval(sampler);
  }
}

/**
 * P10: one account's burst over a fleet of three runner replicas, each idle: 1,000 articles of one
 * 2 s call. Fair shares must not hold a lone account back, so the ideal is the creation time plus
 * one call.
 */
export async function measureFleetBurst(ctx: BenchContext, articles = 1000, replicas = 3): Promise<Figure[]> {
  const articleType = await benchWorkflow(ctx, "fleet_burst", [`[[sim:sleep=${MODEL_SLEEP_MS}]] One part about {title}.`]);
  const more = await startRunnerReplicas(ctx.stack, replicas - 1);
  try {
    const started = performance.now();
    const ids = await createBurst(ctx, articleType, "Fleet", articles);
    const creationSeconds = (performance.now() - started) / 1000;
    const seconds = ((await waitForArticles(ctx, ids, "completed")) - started) / 1000;
    const ideal = MODEL_SLEEP_MS / 1000 + creationSeconds;
    return [
      {
        id: "P10 fleet burst",
        what: `${articles} one-step articles (${MODEL_SLEEP_MS / 1000} s model latency) of one account, created ${CREATION_CONCURRENCY} at a time, over ${replicas} idle runner replicas: all completed after`,
        value: seconds,
        unit: "s",
        baseline: { what: "the ideal: creation + one call", value: ideal },
        goal: "≤ 1.5 × the ideal",
        met: seconds <= 1.5 * ideal,
        detail: { "creation s": creationSeconds },
      },
    ];
  } finally {
    await Promise.all(more.map((replica) => replica.stop()));
  }
}
