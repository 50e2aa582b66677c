// GET /v1/articles/{id}/steps: each step of an article's run with its model, tokens, cost,
// time waited for its provider, times and attempts, plus research, image and finishing lines; the lines add up to the article's
// cost exactly. Step names only, never prompts or outputs. Same access answers as the article read.
import { beforeAll, describe, expect, test } from "bun:test";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { addMemberWithKey, createProject, createTenant, type Tenant } from "../harness/tenants.ts";
import { createArticle } from "../harness/articles.ts";
import { eventually } from "../harness/eventually.ts";
import { builtinWorkflow } from "../../services/workflow-catalog/src/domain/builtin-workflows/index.ts";
import { articleBody, createWorkflow, finished, marker, runOf, waitForArticle } from "./generation-support.ts";

let stack: TestStack;
let tenant: Tenant;
let api: ApiClient;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
});

/** A decimal USD string as an exact count of 10^-12 dollars. */
function picodollars(amount: string): bigint {
  expect(amount).toMatch(/^\d+\.\d{2,12}$/);
  const [whole, fraction] = amount.split(".");
  return BigInt(whole!) * 10n ** 12n + BigInt(fraction!.padEnd(12, "0"));
}

/** What a call costs at the catalog's per-million prices. */
const priced = (promptTokens: number, completionTokens: number, input: string, output: string) =>
  (BigInt(promptTokens) * picodollars(input) + BigInt(completionTokens) * picodollars(output)) / 1_000_000n;

const sumOf = (amounts: string[]) => amounts.reduce((total, a) => total + picodollars(a), 0n);

async function breakdown(client: ApiClient, id: string | number) {
  const res = await client.get(`/v1/articles/${id}/steps`);
  expect(res.status).toBe(200);
  expect(res.body.success).toBe(true);
  return res.body.data;
}

/** Every step (and finishing line) says how long its model call waited for its provider, in whole ms. */
function expectWaitsShown(data: any) {
  for (const line of [...data.steps, ...data.finishing]) {
    expect(Number.isInteger(line.waited_ms)).toBe(true);
    expect(line.waited_ms).toBeGreaterThanOrEqual(0);
  }
}

/** The lines add up to the total, and the total is the article's cost, to the last digit. */
function expectTotalIsTheArticleCost(data: any, article: any) {
  expectWaitsShown(data);
  const lines = [...data.steps, ...data.images, ...data.finishing, ...(data.research ? [data.research] : [])];
  expect(sumOf(lines.map((l: { cost: string }) => l.cost))).toBe(picodollars(data.total_cost));
  expect(data.total_cost).toBe(article.cost);
}

describe("a custom multi-step workflow", () => {
  test("every step with its tokens, cost, wait, times and attempts; a step whose call failed once was tried again within it, its pause counted as waited; the total is the article's cost", async () => {
    const m = marker("steps");
    const type = marker("costed");
    await createWorkflow(api, tenant.projectId, type, [
      { step_name: "Notes", user: `Notes about grinders ${m}` },
      { step_name: "Draft", user: `[[sim:fail-once]]Draft from {step_1_output} ${m}` },
      { step_name: "Tighten", user: `Tighten {step_2_output} ${m}` },
    ]);
    const created = await createArticle(api, articleBody(tenant.projectId, { article_type: type }));
    const article = await waitForArticle(api, created.external_id, finished, 30_000);
    expect(article.status).toBe("completed");

    const data = await breakdown(api, created.id);
    expect(data).toMatchObject({ article_id: created.id, external_id: created.external_id, status: "completed", article_type: type });
    expect(data.steps.map((s: any) => [s.step_number, s.step_name, s.attempts])).toEqual([
      [1, "Notes", 1],
      [2, "Draft", 1],
      [3, "Tighten", 1],
    ]);
    // The server error was ridden out within the call (PROVIDER_RETRY_DELAY_MS, 50 ms in tests), not by a retry of the job.
    expect(data.steps[1].waited_ms).toBeGreaterThanOrEqual(50);
    for (const step of data.steps) {
      expect(step).toMatchObject({ model: "simulator:sim-fast", used_fallback: false, batched: false });
      expect(step.prompt_tokens).toBeGreaterThan(0);
      expect(step.completion_tokens).toBeGreaterThan(0);
      // sim-fast: 0.10 USD per million prompt tokens, 0.40 per million completion tokens.
      expect(picodollars(step.cost)).toBe(priced(step.prompt_tokens, step.completion_tokens, "0.10", "0.40"));
      expect(Date.parse(step.started_at)).toBeLessThanOrEqual(Date.parse(step.finished_at));
    }
    // Steps run one after another; the retried step started before its retry finished it.
    expect(Date.parse(data.steps[1].started_at)).toBeGreaterThanOrEqual(Date.parse(data.steps[0].finished_at));
    expect(Date.parse(data.steps[2].started_at)).toBeGreaterThanOrEqual(Date.parse(data.steps[1].finished_at));
    expect(data.research).toBeNull();
    expect(data.images).toEqual([]);
    expect(data.finishing).toEqual([]);
    expectTotalIsTheArticleCost(data, article);
    // Custom prompts and step outputs are not part of the breakdown either.
    expect(JSON.stringify(data)).not.toContain(m);
  });

  test("a step whose model failed shows the fallback that produced it", async () => {
    const m = marker("fallback");
    const type = marker("fallback");
    await createWorkflow(api, tenant.projectId, type, [
      { step_name: "Outline", user: `Outline ${m}` },
      { step_name: "Write", user: `[[sim:fail-once]]Write from {step_1_output} ${m}` },
    ]);
    const created = await createArticle(api, articleBody(tenant.projectId, { article_type: type, model: "simulator:sim-pro" }));
    const article = await waitForArticle(api, created.external_id, finished, 30_000);
    expect(article.status).toBe("completed");

    const data = await breakdown(api, created.external_id);
    expect(data.steps.map((s: any) => [s.step_name, s.model, s.used_fallback, s.attempts])).toEqual([
      ["Outline", "simulator:sim-pro", false, 1],
      ["Write", "simulator:sim-fast", true, 1],
    ]);
    // Each step is priced at the model that ran it: sim-pro 2.50 / 10.00, its fallback sim-fast 0.10 / 0.40.
    const [outline, write] = data.steps;
    expect(picodollars(outline.cost)).toBe(priced(outline.prompt_tokens, outline.completion_tokens, "2.50", "10.00"));
    expect(picodollars(write.cost)).toBe(priced(write.prompt_tokens, write.completion_tokens, "0.10", "0.40"));
    expectTotalIsTheArticleCost(data, article);
  });

  test("a failed article: finished steps keep their cost, the failing one its attempts, and the total is still the article's cost", async () => {
    const m = marker("failing");
    const type = marker("failing");
    await createWorkflow(api, tenant.projectId, type, [
      { step_name: "Research notes", user: `[[sim:words=2000]]Notes ${m}` },
      { step_name: "Never works", user: `[[sim:fail]] ${m}` },
    ]);
    // 2,000 words at sim-pro's prices: the finished step's cost shows in cents.
    const created = await createArticle(api, articleBody(tenant.projectId, { article_type: type, model: "simulator:sim-pro" }));
    const article = await waitForArticle(api, created.external_id, (a) => a.status === "failed", 60_000);

    const data = await breakdown(api, created.id);
    expect(data.status).toBe("failed");
    const [first, failing] = data.steps;
    expect(first).toMatchObject({ step_name: "Research notes", attempts: 1 });
    expect(picodollars(first.cost)).toBeGreaterThan(0n);
    expect(failing).toMatchObject({ step_name: "Never works", attempts: 5, finished_at: null, cost: "0.00", prompt_tokens: 0, completion_tokens: 0, waited_ms: 0 });
    expect(failing.started_at).toEqual(expect.any(String));
    expectTotalIsTheArticleCost(data, article);
    expect(data.total_cost).toBe(first.cost);
    expect(picodollars(article.cost)).toBeGreaterThanOrEqual(10n ** 10n);
  }, 90_000);

  test("while a step runs it is listed as started and unfinished", async () => {
    const m = marker("slow");
    const type = marker("slow");
    await createWorkflow(api, tenant.projectId, type, [{ step_name: "Slow draft", user: `[[sim:sleep=3000]]Slow ${m}` }]);
    const created = await createArticle(api, articleBody(tenant.projectId, { article_type: type }));
    const running = await eventually(
      () => breakdown(api, created.id),
      (d) => d.steps.length === 1,
      10_000,
      "the step to start",
    );
    expect(running.steps[0]).toMatchObject({ step_number: 1, step_name: "Slow draft", attempts: 1, finished_at: null, cost: "0.00", waited_ms: 0 });
    expect(running.total_cost).toBe("0.00");
    const article = await waitForArticle(api, created.external_id, finished, 30_000);
    const done = await breakdown(api, created.id);
    expect(done.steps[0].finished_at).toEqual(expect.any(String));
    expectTotalIsTheArticleCost(done, article);
  });
});

describe("batch mode", () => {
  test("a batched step shows batched, half price, no wait and one attempt, however often the batch was polled", async () => {
    const created = await createArticle(
      api,
      articleBody(tenant.projectId, { article_type: "song_meaning_single_model_5", title: "What the song really means", model: "simulator:sim-batch", use_batch_api: true }),
    );
    const article = await waitForArticle(api, created.external_id, finished, 30_000);
    expect(article.status).toBe("completed");
    // The job came back to poll the batch at least once before it was done.
    expect((await runOf(stack, created.external_id))!.pickups).toBeGreaterThan(1);

    const data = await breakdown(api, created.id);
    expect(data.steps).toHaveLength(1);
    const [step] = data.steps;
    // Polling the batch is not a wait for the provider's budget.
    expect(step).toMatchObject({ step_number: 1, model: "simulator:sim-batch", batched: true, used_fallback: false, attempts: 1, waited_ms: 0 });
    // sim-batch: 0.50 / 2.00 USD per million tokens, half of it in batch mode.
    expect(picodollars(step.cost)).toBe(priced(step.prompt_tokens, step.completion_tokens, "0.50", "2.00") / 2n);
    expectTotalIsTheArticleCost(data, article);
  }, 60_000);
});

describe("a built-in workflow", () => {
  test("shows its step names, research, image and humanization lines, and never a prompt", async () => {
    const created = await createArticle(
      api,
      articleBody(tenant.projectId, { article_type: "blog_post", target_keyword: "coffee grinder", research_enabled: true, research_max_sources: 2, humanize: true, image_count: 1 }),
    );
    const article = await waitForArticle(api, created.external_id, finished, 90_000);
    expect(article.status).toBe("completed");

    const data = await breakdown(api, created.id);
    const builtin = builtinWorkflow("blog_post")!;
    expect(data.steps.map((s: any) => [s.step_number, s.step_name])).toEqual(builtin.steps.map((s) => [s.step_number, s.step_name]));
    for (const step of data.steps) {
      expect(Object.keys(step).sort()).toEqual(
        ["attempts", "batched", "completion_tokens", "cost", "finished_at", "model", "prompt_tokens", "started_at", "step_name", "step_number", "used_fallback", "waited_ms"],
      );
    }
    expect(data.research).toMatchObject({ query: "coffee grinder", cost: "0.00" });
    expect(data.research.sources).toBeGreaterThanOrEqual(1);
    expect(data.research.sources).toBeLessThanOrEqual(2);
    expect(data.images).toHaveLength(1);
    expect(data.images[0]).toMatchObject({ position: 1, cost: "0.00" });
    // The humanize pass, after any length control and repair calls for the brief checks the draft
    // failed, and before any the pass's own text needed ("after humanize: …").
    const tasks: string[] = data.finishing.map((f: any) => f.task);
    const humanizedAt = tasks.indexOf("humanize");
    expect(tasks.filter((task) => !/^(repair \d+|length \d+|after (repairs|humanize)): /.test(task))).toEqual(["humanize"]);
    expect(tasks.slice(humanizedAt + 1).every((task) => task.startsWith("after humanize: "))).toBe(true);
    const humanizeLine = data.finishing.find((f: any) => f.task === "humanize");
    expect(humanizeLine).toMatchObject({ model: "simulator:sim-fast", used_fallback: false });
    expect(picodollars(humanizeLine.cost)).toBeGreaterThan(0n);
    expectTotalIsTheArticleCost(data, article);

    // No fragment of any built-in prompt appears anywhere in the answer.
    const text = JSON.stringify(data);
    for (const step of builtin.steps) {
      for (const prompt of [step.system, step.user]) {
        for (const line of prompt.split("\n").filter((l) => l.trim().length > 30)) expect(text).not.toContain(line.trim().slice(0, 30));
      }
    }
  }, 120_000);
});

describe("access and answers like the article read", () => {
  test("another account's article is 404 with only a message; a member who cannot view its project gets 403", async () => {
    const created = await createArticle(api, articleBody(tenant.projectId));
    const stranger = apiClient(stack.baseUrl, (await createTenant(stack)).token);
    for (const id of [created.id, created.external_id]) {
      const read = await stranger.get(`/v1/articles/${id}`);
      const steps = await stranger.get(`/v1/articles/${id}/steps`);
      expect(steps.status).toBe(404);
      expect(steps.body).toEqual(read.body);
    }

    const elsewhere = await createProject(stack, tenant.accountId, "Elsewhere");
    const limited = apiClient(stack.baseUrl, (await addMemberWithKey(stack, tenant, "viewer", [elsewhere])).token);
    const read = await limited.get(`/v1/articles/${created.id}`);
    const steps = await limited.get(`/v1/articles/${created.id}/steps`);
    expect(read.status).toBe(403);
    expect(steps.status).toBe(403);
    expect(steps.body).toEqual(read.body);

    // A viewer of the project reads the breakdown as it reads the article.
    const viewer = apiClient(stack.baseUrl, (await addMemberWithKey(stack, tenant, "viewer")).token);
    expect((await viewer.get(`/v1/articles/${created.id}/steps`)).status).toBe(200);
  });

  test("junk and missing identifiers are 404; no key is 401", async () => {
    for (const id of ["abc", "0", "1.5", "999999999", crypto.randomUUID()]) {
      const res = await api.get(`/v1/articles/${id}/steps`);
      expect(res.status).toBe(404);
      expect(Object.keys(res.body)).toEqual(["message"]);
    }
    const created = await createArticle(api, articleBody(tenant.projectId));
    const anonymous = await apiClient(stack.baseUrl).get(`/v1/articles/${created.id}/steps`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.code).toBe("UNAUTHENTICATED");
  });

  test("it counts in the articles rate limit", async () => {
    // Minute windows restart on the minute: both requests must fall in one.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 55_000) await Bun.sleep(60_000 - intoMinute + 100);
    const own = await createTenant(stack, { perMinute: 1000 });
    const client = apiClient(stack.baseUrl, own.token);
    const created = await createArticle(client, articleBody(own.projectId));
    const read = await client.get(`/v1/articles/${created.id}`);
    const steps = await client.get(`/v1/articles/${created.id}/steps`);
    expect(steps.headers.get("ratelimit-limit")).toBe("1000");
    expect(Number(steps.headers.get("ratelimit-remaining"))).toBe(Number(read.headers.get("ratelimit-remaining")) - 1);
  });
});
