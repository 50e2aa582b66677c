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

/** POST /v1/articles of one bench article (fields override the defaults); fails unless 201. */
export async function createBenchArticle(ctx: BenchContext, articleType: string, title: string, fields: Record<string, unknown> = {}): Promise<{ id: number; externalId: string }> {
  const res = await ctx.api.post("/v1/articles", {
    project_id: ctx.projectId,
    title,
    article_type: articleType,
    target_word_count: 100,
    tone: "friendly",
    point_of_view: "second_person",
    language: "en",
    ...fields,
  });
  if (res.status !== 201) throw new Error(`creating "${title}": ${res.status} ${JSON.stringify(res.body)}`);
  return { id: res.body.data.id, externalId: res.body.data.external_id };
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
