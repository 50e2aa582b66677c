// P2: POST /v1/articles from 16 concurrent clients while the created articles generate, every one
// of them followed to completed. The timed load follows as long a load of the same kind, whose
// articles generate into it: a cold stack (code not yet compiled by the JIT's upper tiers in seven
// processes sharing two cores, connection pools and prepared statements still opening) is not what
// a service that has been up for a while answers with. Three 10 s passes over one stack read about
// 320, 390 and 395 created/s, the first with p99 125-137 ms and its slowest requests in its first
// two seconds, the later ones 77-99 ms; the cold pass's figures are in the detail.
import type { BenchContext } from "./context.ts";
import { load, type Figure, type LoadResult } from "./measure.ts";
import { waitForArticles } from "./workflows.ts";

const CONCURRENCY = 16;

/** Creations from CONCURRENCY clients for `seconds`; the ids of the articles created. */
async function createUnderLoad(ctx: BenchContext, articleType: string, seconds: number, created: number[]): Promise<LoadResult> {
  let i = created.length;
  return load(
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
    { concurrency: CONCURRENCY, durationMs: seconds * 1000 },
  );
}

export async function measureCreation(ctx: BenchContext, articleType: string, httpFloor: LoadResult): Promise<Figure[]> {
  const created: number[] = [];
  const warmUp = await createUnderLoad(ctx, articleType, ctx.seconds, created);
  const warmUpCreated = created.length;
  const started = performance.now();
  const result = await createUnderLoad(ctx, articleType, ctx.seconds, created);
  const completedAt = await waitForArticles(ctx, created, "completed");
  return [
    {
      id: "P2 create",
      what: `POST /v1/articles, ${CONCURRENCY} concurrent, one-step workflow generating alongside (after ${ctx.seconds} s of the same load)`,
      value: result.perSecond,
      unit: "created/s",
      baseline: { what: "HTTP floor: Bun fetch → bare Bun.serve", value: httpFloor.perSecond },
      goal: "≥ 250/s, p99 ≤ 100 ms, all completed",
      met: result.perSecond >= 250 && result.p99ms <= 100 && result.errors === 0,
      detail: {
        "p50 ms": result.p50ms,
        "p99 ms": result.p99ms,
        errors: result.errors,
        created: created.length - warmUpCreated,
        "created in the warm-up": warmUpCreated,
        "warm-up created/s": warmUp.perSecond,
        "warm-up p99 ms": warmUp.p99ms,
        "all completed after s": (completedAt - started) / 1000,
      },
    },
  ];
}
