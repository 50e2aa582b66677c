// P8: articles over a rate-limited provider, on three runner replicas sharing its budget. A
// simulator of its own plays a provider limited to BENCH_PACED_RPM requests a minute (OpenAI's
// 429s and x-ratelimit headers; the catalog sets no limit, so the runners learn it); N one-step
// articles are created at once and the makespan of their calls at the provider is read beside the
// limit's ideal, the time the limit itself needs for them (one second's burst, then the rest at
// the limit).
import { stackCredential } from "../harness/service-clients.ts";
import { ModelCatalogService } from "../../proto/gen/articles/generation_runner/v1/models_pb.ts";
import { startSimulator, type RunningSimulator } from "../../services/model-simulator/src/simulator.ts";
import { serviceClient } from "../../services/kit/src/clients.ts";
import type { BenchContext } from "./context.ts";
import { startRunnerReplicas } from "../harness/runner-replicas.ts";
import type { Figure } from "./measure.ts";
import { benchWorkflow, createBenchArticle, waitForArticles } from "./workflows.ts";

export const PACED_PROVIDER = "paced";

/** The limited provider, started before the stack so the runner is configured with it. */
export async function startLimitedProvider(requestsPerMinute: number): Promise<{ simulator: RunningSimulator; env: Record<string, string> }> {
  const simulator = await startSimulator({ port: 0, provider: { requestsPerMinute } });
  return { simulator, env: { [`PROVIDER_${PACED_PROVIDER.toUpperCase()}_BASE_URL`]: `${simulator.url}/v1` } };
}

interface ProviderCounts {
  admitted: number;
  rate_limited: number;
  first_admitted_at: number | null;
  last_admitted_at: number | null;
}

export async function measurePacing(ctx: BenchContext, provider: RunningSimulator, requestsPerMinute: number, articles: number, replicas = 3): Promise<Figure[]> {
  const more = await startRunnerReplicas(ctx.stack, replicas - 1);
  try {
    return await pacedMakespan(ctx, provider, requestsPerMinute, articles, replicas);
  } finally {
    await Promise.all(more.map((replica) => replica.stop()));
  }
}

async function pacedMakespan(ctx: BenchContext, provider: RunningSimulator, requestsPerMinute: number, articles: number, replicas: number): Promise<Figure[]> {
  const model = `${PACED_PROVIDER}:sim-fast`;
  const catalog = serviceClient(ModelCatalogService, { baseUrl: ctx.stack.env.GENERATION_RUNNER_URL, credential: stackCredential(ctx.stack, "operator") });
  await catalog.addModel({ model: { id: model, active: true, inputPricePerMillion: "1", outputPricePerMillion: "1" } });
  const articleType = await benchWorkflow(ctx, "paced", ["[[sim:words=100]] Write about {title}."]);
  await fetch(`${provider.url}/_sim/provider/counts`, { method: "DELETE" });

  const ids: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next < articles) ids.push((await createBenchArticle(ctx, articleType, `Paced ${next++}`, { model })).id);
    }),
  );
  await waitForArticles(ctx, ids, "completed", 30 * 60_000);
  const { counts } = (await (await fetch(`${provider.url}/_sim/provider`)).json()) as { counts: ProviderCounts };

  const perSecond = requestsPerMinute / 60;
  const idealS = (counts.admitted - perSecond) / perSecond;
  const makespanS = (counts.last_admitted_at! - counts.first_admitted_at!) / 1000;
  const refusedShare = counts.rate_limited / (counts.admitted + counts.rate_limited);
  return [
    {
      id: "P8 paced makespan",
      what: `${articles} one-step articles created at once over a provider limited to ${requestsPerMinute} requests a minute (limit learned from its headers), ${replicas} runner replicas: first to last call answered`,
      value: makespanS,
      unit: "s",
      baseline: { what: "the limit's ideal for the same calls", value: idealS },
      goal: "≤ 1.2 × the ideal, 429s < 5% of calls",
      met: makespanS <= idealS * 1.2 && refusedShare < 0.05,
      detail: { "calls answered": counts.admitted, "429s": counts.rate_limited, "429 share %": refusedShare * 100 },
    },
  ];
}
