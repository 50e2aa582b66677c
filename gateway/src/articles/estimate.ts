// POST /v1/articles/estimate: the creation body checked exactly as POST /v1/articles checks it
// (same access rule, same 422s, same workflow and model resolution), answered with the words
// creation would reserve, what remains of the month's allowance, and a cost range. It reads only:
// no article, no reservation, no idempotency key.
import type { Model } from "../../../proto/gen/articles/generation_runner/v1/models_pb.ts";
import type { Caller, V1Gate } from "../plugins/caller.ts";
import type { ServiceClients } from "../services.ts";
import { costRange } from "./cost-range.ts";
import { envInt } from "../../../services/kit/src/config.ts";
import { readCreationBody, reservedWordsFor, resolveAgainstProject } from "./create-article.ts";
import type { ArticleRequest } from "./creation-request.ts";

// The runner's repair budget per article (QUALITY_REPAIR_CALLS, docs/configuration.md), counted in the cost range.
const REPAIR_CALLS = envInt(process.env, "QUALITY_REPAIR_CALLS", 3, { min: 0, max: 20 });

const wordsIn = (text: string | null | undefined) => (text ? text.split(/\s+/).filter(Boolean).length : 0);

/** What the caller sent that prompts can carry ({title}, {additional_context}, …). */
const requestWordsOf = (r: ArticleRequest) =>
  wordsIn(r.title) + wordsIn(r.targetKeyword) + wordsIn(r.keywords.join(" ")) + wordsIn(r.additionalContext) + wordsIn(r.additionalInstruction) + wordsIn(r.targetAudience);

/** The model's fallback from the catalog, when it names one that batch mode would not skip. */
async function fallbackOf(clients: ServiceClients, model: Model, batch: boolean): Promise<Model | undefined> {
  if (!model.fallbackModel || batch) return undefined;
  const { models } = await clients.models.listModels({});
  return models.find((m) => m.id === model.fallbackModel);
}

export async function estimateArticle(gate: V1Gate, caller: Caller, body: unknown) {
  const { clients, projects } = gate;
  const { v, request } = readCreationBody(body);
  // As creation: access outranks field errors (404 for another account's project, 403 without update access).
  const project = v.errors.project_id ? undefined : await projects.authorize(caller, request.projectId, "update");
  const { workflow, model } = await resolveAgainstProject(gate, v, request, project);
  v.check();
  if (!project || !workflow || !model) throw new Error("estimate passed validation without its project, workflow or model");

  const reserved = reservedWordsFor(request.targetWordCount);
  const [usage, fallback] = await Promise.all([
    clients.quota.getWordUsage({ accountId: BigInt(caller.accountId) }),
    fallbackOf(clients, model, request.useBatchApi),
  ]);
  const range = costRange({
    targetWords: request.targetWordCount,
    reservedWords: reserved,
    steps: workflow.stepCount,
    requestWords: requestWordsOf(request),
    researchWords: request.researchEnabled
      ? { min: request.researchMinContentWords, max: request.researchMaxSources * request.researchMaxWordsPerSource }
      : { min: 0, max: 0 },
    humanize: request.humanize,
    model,
    fallback,
    batch: request.useBatchApi,
    // Built-in workflows, and custom ones that opt in, get length control and brief repairs after their steps.
    finishing: workflow.builtin || workflow.briefRepairs ? { repairCalls: REPAIR_CALLS } : undefined,
  });
  const remaining = Number(usage.remainingWords);
  return {
    project_id: Number(project.id),
    article_type: request.articleType,
    builtin_workflow: workflow.builtin,
    steps: workflow.stepCount,
    model: model.id,
    fallback_model: fallback?.id ?? null,
    words_to_reserve: reserved,
    words_remaining: remaining,
    fits_allowance: reserved <= remaining,
    allowance_period: usage.period,
    cost_range: { min: range.min, max: range.max },
    tokens: {
      prompt: range.promptTokens,
      completion: range.completionTokens,
    },
  };
}
