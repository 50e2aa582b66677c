// GET /v1/articles/{id}/steps: what each part of an article's run cost, read from the runner's
// checkpoints (the records the article's cost is set from). Step names only: prompts and outputs
// are never part of it, for built-in and custom workflows alike.
import type { Client } from "@connectrpc/connect";
import type { Article } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import type { CostBreakdownService } from "../../../proto/gen/articles/generation_runner/v1/cost_breakdown_pb.ts";
import { iso, presentCost } from "../../../services/kit/src/public-article.ts";

export async function stepBreakdown(costs: Client<typeof CostBreakdownService>, article: Article) {
  const b = await costs.getCostBreakdown({ externalId: article.externalId });
  return {
    article_id: Number(article.id),
    external_id: article.externalId,
    status: article.status,
    article_type: article.articleType,
    steps: b.steps.map((s) => ({
      step_number: s.stepNumber,
      step_name: s.stepName,
      model: s.model,
      used_fallback: s.usedFallback,
      batched: s.batched,
      prompt_tokens: s.promptTokens,
      completion_tokens: s.completionTokens,
      cost: presentCost(s.cost),
      waited_ms: s.waitedMs,
      attempts: s.attempts,
      started_at: iso(s.startedAt),
      finished_at: iso(s.finishedAt),
    })),
    research: b.research
      ? { query: b.research.query, sources: b.research.sources, cost: presentCost(b.research.cost), finished_at: iso(b.research.finishedAt) }
      : null,
    images: b.images.map((i) => ({ position: i.position, model: i.model, size: i.size, cost: presentCost(i.cost), finished_at: iso(i.finishedAt) })),
    finishing: b.finishing.map((f) => ({
      task: f.task,
      model: f.model,
      used_fallback: f.usedFallback,
      prompt_tokens: f.promptTokens,
      completion_tokens: f.completionTokens,
      cost: presentCost(f.cost),
      waited_ms: f.waitedMs,
      finished_at: iso(f.finishedAt),
    })),
    total_cost: presentCost(b.totalCost),
  };
}
