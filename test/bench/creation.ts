// P2: POST /v1/articles from 16 concurrent clients while the created articles generate, every one
// of them followed to completed.
import type { BenchContext } from "./context.ts";
import { load, type Figure, type LoadResult } from "./measure.ts";
import { waitForArticles } from "./workflows.ts";

const CONCURRENCY = 16;

export async function measureCreation(ctx: BenchContext, articleType: string, httpFloor: LoadResult): Promise<Figure[]> {
  const created: number[] = [];
  let i = 0;
  const started = performance.now();
  const result = await load(
    "POST /v1/articles",
    async () => {
      const res = await ctx.api.post("/v1/articles", {
        project_id: ctx.projectId,
        title: `Created under load ${i++}`,
        article_type: articleType,
        target_word_count: 100,
        tone: "friendly",
        point_of_view: "second_person",
        language: "en",
      });
      if (res.status === 201) created.push(res.body.data.id);
      return res.status === 201;
    },
    { concurrency: CONCURRENCY, durationMs: ctx.seconds * 1000 },
  );
  const completedAt = await waitForArticles(ctx, created, "completed");
  return [
    {
      id: "P2 create",
      what: `POST /v1/articles, ${CONCURRENCY} concurrent, one-step workflow generating alongside`,
      value: result.perSecond,
      unit: "created/s",
      baseline: { what: "HTTP floor: Bun fetch → bare Bun.serve", value: httpFloor.perSecond },
      goal: "≥ 250/s, p99 ≤ 100 ms, all completed",
      met: result.perSecond >= 250 && result.p99ms <= 100 && result.errors === 0,
      detail: {
        "p50 ms": result.p50ms,
        "p99 ms": result.p99ms,
        errors: result.errors,
        created: created.length,
        "all completed after s": (completedAt - started) / 1000,
      },
    },
  ];
}
