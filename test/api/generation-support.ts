// Shared by the generation and research whole-stack tests: article creation and polling through
// the public API, custom workflows, the simulator's call counts, the runner's run record, the
// quota ledger, and a local webhook receiver.
import { expect } from "bun:test";
import { GetRunResponseSchema } from "../../proto/gen/articles/generation_runner/v1/runs_pb.ts";
import type { MessageShape } from "@bufbuild/protobuf";
import { articleBody as baseArticleBody } from "../harness/articles.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { lifecycleClient, modelCatalogClient, quotaClient, runClient } from "../harness/service-clients.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { startReceiver } from "../harness/webhook-receiver.ts";

export const TERMINAL = ["completed", "published", "failed"];

/** The simulator's model that writes as real models do (not seeded in the catalog). */
export const REAL_MODEL = "simulator:sim-real";

/**
 * Adds sim-real to the stack's catalog once, dearer than sim-fast so it never becomes the default
 * model of other tests sharing the stack.
 */
export async function addRealModel(stack: TestStack): Promise<void> {
  const catalog = modelCatalogClient(stack);
  if ((await catalog.listModels({})).models.some((m) => m.id === REAL_MODEL)) return;
  await catalog.addModel({ model: { id: REAL_MODEL, active: true, inputPricePerMillion: "0.15", outputPricePerMillion: "0.60" } });
}

/** A tenant of the shared stack, with sim-real in the catalog, and its API client. */
export async function realModelTenant(): Promise<{ stack: TestStack; tenant: Tenant; api: ApiClient }> {
  const stack = await useStack();
  await addRealModel(stack);
  const tenant = await createTenant(stack);
  return { stack, tenant, api: apiClient(stack.baseUrl, tenant.token) };
}

/** A unique marker so simulator call counts and echoes belong to one test. */
export const marker = (label = "m") => `${label}-${crypto.randomUUID().slice(0, 8)}`;

/** A creation body for a short article, so a whole generation runs fast. */
export const articleBody = (projectId: number, extra: Record<string, unknown> = {}) =>
  baseArticleBody(projectId, { title: "Choosing a coffee grinder", target_word_count: 150, ...extra });

/**
 * Polls GET /v1/articles/{id} until `done` holds or the deadline passes (then fails with the last
 * state). Every answer must be 200, unless `unavailable` names the 503s a test expects (an outage
 * it causes): those are counted there and polled again, as the API tells a client to.
 */
export async function waitForArticle(
  api: ApiClient,
  id: string | number,
  done: (a: any) => boolean = (a) => TERMINAL.includes(a.status),
  timeoutMs = 60_000,
  unavailable?: { count: number },
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let last: any;
  while (Date.now() < deadline) {
    const res = await api.get(`/v1/articles/${id}`);
    if (res.status === 503 && unavailable) {
      unavailable.count++;
      await Bun.sleep(200);
      continue;
    }
    expect(res.status).toBe(200);
    last = res.body.data;
    if (done(last)) return last;
    await Bun.sleep(200);
  }
  throw new Error(`article ${id} did not reach the expected state within ${timeoutMs} ms; last: ${JSON.stringify({ status: last?.status, current_step: last?.current_step })}`);
}

/** A finished article: completed (or published once its webhook went out) with its originality check recorded. */
export const finished = (a: any) => a.status === "failed" || (["completed", "published"].includes(a.status) && a.ai_detection_score !== null);

export async function createStep(api: ApiClient, projectId: number, step: Record<string, unknown>): Promise<any> {
  const res = await api.post(`/v1/projects/${projectId}/workflows`, { output_format: "markdown", system: "", ...step });
  if (res.status !== 201) throw new Error(`creating step answered ${res.status}: ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** A custom workflow from step definitions (numbered 1, 2, … unless given). */
export async function createWorkflow(api: ApiClient, projectId: number, articleType: string, steps: Record<string, unknown>[]): Promise<any[]> {
  const created = [];
  for (const [i, step] of steps.entries()) {
    created.push(await createStep(api, projectId, { article_type: articleType, step_number: i + 1, step_name: `Step ${i + 1}`, system: "You write.", ...step }));
  }
  return created;
}

/** How many times the simulator served prompts containing `contains`, per prompt and in total. */
export async function simulatorCalls(stack: TestStack, contains: string): Promise<{ calls: { prompt: string; count: number }[]; total: number }> {
  const res = await fetch(`${stack.simulatorUrl}/_sim/calls?contains=${encodeURIComponent(contains)}`);
  return (await res.json()) as { calls: { prompt: string; count: number }[]; total: number };
}

/** Calls of the one prompt that, directives aside, starts with `start` and contains `m`. */
export async function callsStartingWith(stack: TestStack, m: string, start: string): Promise<number> {
  const { calls } = await simulatorCalls(stack, m);
  return calls.filter((c) => c.prompt.replace(/\[\[sim:[^\]]*\]\]/g, "").startsWith(start)).reduce((n, c) => n + c.count, 0);
}

export async function runOf(stack: TestStack, externalId: string): Promise<MessageShape<typeof GetRunResponseSchema>["run"]> {
  return (await runClient(stack).getRun({ externalId })).run;
}

/** The quota ledger as the quota service answers it (word counts as bigints). */
export async function wordUsage(stack: TestStack, accountId: number) {
  return quotaClient(stack).getWordUsage({ accountId: BigInt(accountId) });
}

export async function researchSources(stack: TestStack, externalId: string) {
  return (await lifecycleClient(stack, "operator").listResearchSources({ externalId })).sources;
}

export interface WebhookReceiver {
  url: string;
  received: { body: any; at: number }[];
  stop(): void;
}

/** One hook of the shared local receiver, its deliveries seen as parsed bodies. */
export function webhookReceiver(): WebhookReceiver {
  const receiver = startReceiver();
  const hook = receiver.hook();
  return {
    url: hook.url,
    get received() {
      return hook.requests.map((r) => ({ body: r.json ?? null, at: r.at }));
    },
    stop: receiver.stop,
  };
}

export const isDecimal = (value: unknown) => typeof value === "string" && /^\d+\.\d+$/.test(value);
