// Custom workflows the benchmark generates with, and waiting for its articles to finish.
import type { BenchContext } from "./context.ts";

/** Adds a custom workflow of the given user prompts (one step each) and returns its article_type. */
export async function benchWorkflow(ctx: BenchContext, name: string, prompts: string[]): Promise<string> {
  const articleType = `bench_${name}`;
  for (const [i, user] of prompts.entries()) {
    const res = await ctx.api.post(`/v1/projects/${ctx.projectId}/workflows`, {
      article_type: articleType,
      step_number: i + 1,
      step_name: `Step ${i + 1}`,
      system: "You write articles.",
      user,
      output_format: "markdown",
    });
    if (res.status !== 201) throw new Error(`workflow ${articleType} step ${i + 1}: ${res.status} ${JSON.stringify(res.body)}`);
  }
  return articleType;
}

/** Waits until every article reached `status` (or failed, which throws); returns when that was. */
export async function waitForArticles(ctx: BenchContext, ids: number[], status: string, timeoutMs = 300_000): Promise<number> {
  const pending = new Set(ids);
  const deadline = performance.now() + timeoutMs;
  while (pending.size > 0) {
    if (performance.now() > deadline) throw new Error(`${pending.size} of ${ids.length} articles did not reach ${status}`);
    // Read straight from the database so waiting does not load the gateway being measured.
    const rows = await ctx.sql<{ id: number; status: string }[]>`select id, status from article_store.articles where id in ${ctx.sql([...pending])}`;
    for (const row of rows) {
      if (row.status === "failed") throw new Error(`article ${row.id} failed`);
      if (row.status === status || (status === "completed" && row.status === "published")) pending.delete(Number(row.id));
    }
    if (pending.size > 0) await Bun.sleep(50);
  }
  return performance.now();
}
