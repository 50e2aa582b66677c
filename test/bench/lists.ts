// P1 list pages: a page of 20 completed articles (800 and 10,000 words, full content, as the
// spec's list entries carry) and a page of a project's 20 workflows, each through the gateway
// beside the same rows read by postgres.js in a bare Bun.serve answering JSON.stringify
// (bare-list-server.ts), in a process of its own as the gateway is, at the same concurrency.
import type { BenchContext } from "./context.ts";
import { load, type Figure, type LoadResult } from "./measure.ts";
import { benchWorkflow, createBenchArticle, waitForArticles } from "./workflows.ts";

const CONCURRENCY = 32;
const PAGE = 20;
export const LIST_GOAL = "≥ 0.35 × baseline, p99 ≤ 25 ms";
const met = (list: LoadResult, bare: LoadResult) => list.perSecond >= 0.35 * bare.perSecond && list.p99ms <= 25 && list.errors === 0;

/** The bare list server on a port of its own, until `stop`. */
async function bareListServer(databaseUrl: string) {
  const server = Bun.spawn([process.execPath, new URL("./bare-list-server.ts", import.meta.url).pathname], { env: { ...process.env, DATABASE_URL: databaseUrl }, stdout: "pipe" });
  const port = Number(new TextDecoder().decode((await server.stdout.getReader().read()).value).trim());
  return { url: (query: string) => `http://127.0.0.1:${port}/?${query}`, stop: () => server.kill() };
}

/**
 * Both loads, the baseline first. Each answer is checked once for a page of `PAGE`, then only for
 * 200 and its whole body: the load generator shares the cores, and parsing megabytes of JSON on
 * every answer would take them from both sides alike.
 */
async function pageBesideBare(ctx: BenchContext, name: string, path: string, bareUrl: string) {
  const headers = { authorization: `Bearer ${ctx.token}` };
  for (const [url, init] of [[bareUrl, {}], [`${ctx.stack.baseUrl}${path}`, { headers }]] as const) {
    const entries = ((await (await fetch(url, init)).json()) as { data: unknown[] }).data.length;
    if (entries !== PAGE) throw new Error(`${url}: ${entries} entries, not ${PAGE}`);
  }
  const full = async (res: Response) => res.status === 200 && (await res.arrayBuffer()).byteLength > 0;
  const bare = await load(`bare ${name}`, async () => full(await fetch(bareUrl)), { concurrency: CONCURRENCY, durationMs: ctx.seconds * 1000 });
  const list = await load(name, async () => full(await fetch(`${ctx.stack.baseUrl}${path}`, { headers })), { concurrency: CONCURRENCY, durationMs: ctx.seconds * 1000 });
  return { bare, list, bytes: (await (await fetch(`${ctx.stack.baseUrl}${path}`, { headers })).text()).length };
}

function listFigure(id: string, what: string, measured: { bare: LoadResult; list: LoadResult; bytes: number }): Figure {
  const { bare, list, bytes } = measured;
  return {
    id,
    what: `${what}, ${CONCURRENCY} concurrent (${Math.round(bytes / 1024)} KiB a page)`,
    value: list.perSecond,
    unit: "req/s",
    baseline: { what: "the same rows by postgres.js in a bare Bun.serve answering JSON.stringify", value: bare.perSecond },
    goal: LIST_GOAL,
    met: met(list, bare),
    detail: { "p50 ms": list.p50ms, "p99 ms": list.p99ms, errors: list.errors, "baseline p50 ms": bare.p50ms, "baseline p99 ms": bare.p99ms },
  };
}

export async function measureLists(ctx: BenchContext): Promise<Figure[]> {
  const bare = await bareListServer(ctx.databaseUrl);
  try {
    const figures: Figure[] = [];
    // Each length's 20 articles are the project's newest completed ones while it is measured.
    for (const words of [800, 10_000]) {
      const articleType = await benchWorkflow(ctx, `listed_${words}`, [`[[sim:words=${words}]] Write about {title}.`]);
      const ids: number[] = [];
      for (let i = 0; i < PAGE; i++) ids.push((await createBenchArticle(ctx, articleType, `Listed article ${i}`, { target_word_count: words })).id);
      await waitForArticles(ctx, ids, "completed");
      const path = `/v1/articles?project_id=${ctx.projectId}&status=completed&per_page=${PAGE}`;
      const measured = await pageBesideBare(ctx, `list of ${words}-word articles`, path, bare.url(`query=articles&project_id=${ctx.projectId}&status=completed`));
      figures.push(listFigure(`P1 list ${words}`, `GET /v1/articles?project_id&status=completed&per_page=20, ${words.toLocaleString("en-US")}-word articles`, measured));
    }
    // A project of at least 20 workflows (the bench's own are among them), each of three steps.
    const { total } = (await ctx.api.get(`/v1/projects/${ctx.projectId}/workflows?per_page=1`)).body.meta;
    for (let i = total; i < PAGE; i++) await benchWorkflow(ctx, `listed_workflow_${i}`, ["Outline {title}.", "Write about {title}.", "Polish the article."]);
    const measured = await pageBesideBare(ctx, "list of workflows", `/v1/projects/${ctx.projectId}/workflows?per_page=${PAGE}`, bare.url(`query=workflows&project_id=${ctx.projectId}`));
    figures.push(listFigure("P1 workflows", `GET /v1/projects/{id}/workflows?per_page=20`, measured));
    return figures;
  } finally {
    bare.stop();
  }
}
