// Batch mode: a single-step workflow on a batch-capable model goes through the provider's files
// + batches API (the simulator's, which completes batches on a timer), shows status batching
// meanwhile, and is billed at half the model's prices.
import { beforeAll, expect, test } from "bun:test";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { createArticle } from "../harness/articles.ts";
import { articleBody, finished, runOf, waitForArticle } from "./generation-support.ts";

let stack: TestStack;
let api: ApiClient;
let tenant: Tenant;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
});

test("a batch article completes through the batch API at half price", async () => {
  const created = await createArticle(
    api,
    articleBody(tenant.projectId, { article_type: "song_meaning_single_model_5", title: "What the song really means", model: "simulator:sim-batch", use_batch_api: true }),
  );
  expect(created.status).toBe("batching");
  const waiting = await waitForArticle(api, created.external_id, (a) => a.current_step !== null || finished(a), 15_000);
  expect(["batching", "completed"]).toContain(waiting.status);

  const done = await waitForArticle(api, created.external_id, finished, 30_000);
  expect(done.status).toBe("completed");
  expect(done.ai_model_used).toBe("simulator:sim-batch");
  expect(done.content.length).toBeGreaterThan(100);

  const run = await runOf(stack, created.external_id);
  expect(run!.batchId).toStartWith("batch_");
  const [step] = run!.steps;
  expect(step!.batched).toBe(true);
  // sim-batch costs 0.50 / 2.00 USD per million tokens; batch work is billed at half that.
  const fullPrice = (step!.promptTokens * 0.5 + step!.completionTokens * 2.0) / 1_000_000;
  expect(Number(step!.cost)).toBeCloseTo(fullPrice / 2, 12);
  expect(Number(done.cost)).toBeCloseTo(fullPrice / 2, 12);
}, 60_000);
