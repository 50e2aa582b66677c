// P1: polling one completed ~1,000-word article through the gateway, beside a bare postgres.js
// read of the same row from the same database (list pages: lists.ts).
import type { BenchContext } from "./context.ts";
import { load, loadAtRate, type Figure } from "./measure.ts";
import { createBenchArticle, waitForArticles } from "./workflows.ts";

const CONCURRENCY = 32;

/** A project of the bench tenant holding `count` completed articles of about `words` words. */
async function completedArticles(ctx: BenchContext, articleType: string, count: number): Promise<number[]> {
  const ids: number[] = [];
  for (let i = 0; i < count; i++) {
    ids.push((await createBenchArticle(ctx, articleType, `Polled article ${i}`, { target_word_count: 1000 })).id);
  }
  await waitForArticles(ctx, ids, "completed");
  return ids;
}

export async function measureReads(ctx: BenchContext, articleType: string): Promise<Figure[]> {
  const ids = await completedArticles(ctx, articleType, 20);
  const polled = ids[0];
  const ms = ctx.seconds * 1000;
  const payload = (await ctx.api.get(`/v1/articles/${polled}`)).body;
  const bytes = JSON.stringify(payload).length;

  // Baselines: the same rows read straight from Postgres, as a service would with no work around it.
  const bareGet = await load("bare primary-key read", async () => (await ctx.sql`select * from article_store.articles where id = ${polled}`).length === 1, { concurrency: CONCURRENCY, durationMs: ms });
  const get = await load("GET /v1/articles/{id}", async () => (await ctx.api.get(`/v1/articles/${polled}`)).status === 200, { concurrency: CONCURRENCY, durationMs: ms });
  // The latency goal holds at the rate the throughput goal asks for, held steady (open loop).
  const steadyRate = Math.max(1, Math.round(0.7 * 0.35 * bareGet.perSecond));
  const steady = await loadAtRate("GET /v1/articles/{id} at a steady rate", async () => (await ctx.api.get(`/v1/articles/${polled}`)).status === 200, { perSecond: steadyRate, durationMs: ms });

  return [
    {
      id: "P1 get",
      what: `GET /v1/articles/{id}, ${CONCURRENCY} concurrent (${bytes} B)`,
      value: get.perSecond,
      unit: "req/s",
      baseline: { what: "bare postgres.js primary-key read", value: bareGet.perSecond },
      goal: "≥ 0.35 × baseline",
      met: get.perSecond >= 0.35 * bareGet.perSecond && get.errors === 0,
      detail: { "p50 ms": get.p50ms, "p99 ms": get.p99ms, errors: get.errors, "baseline p50 ms": bareGet.p50ms, "baseline p99 ms": bareGet.p99ms },
    },
    {
      id: "P1 get p99",
      what: `GET /v1/articles/{id} p99 at a steady ${steadyRate} req/s (0.7 × 0.35 × baseline)`,
      value: steady.p99ms,
      unit: "ms",
      goal: "≤ 20 ms",
      met: steady.p99ms <= 20 && steady.errors === 0,
      detail: { "p50 ms": steady.p50ms, requests: steady.requests, errors: steady.errors },
    },
  ];
}
