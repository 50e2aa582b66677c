// POST /v1/articles/estimate: the creation body checked exactly as creation checks it (same 403,
// 404 and 422 answers), answered with the words creation would reserve, what remains of the
// month's allowance and a cost range from the model prices; it creates, reserves and claims nothing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { useStack, type TestStack } from "../harness/stack.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { addMemberWithKey, createTenant, type Tenant } from "../harness/tenants.ts";
import { articleBody } from "../harness/articles.ts";
import { holdGeneration, wordUsage, type GenerationHold } from "./articles-fixtures.ts";

let stack: TestStack;
let hold: GenerationHold;

beforeAll(async () => {
  stack = await useStack();
  // Reservations stay as creation made them: no generation settles them while the file runs.
  hold = await holdGeneration(stack);
});

afterAll(async () => {
  await hold.release();
});

async function tenantWithApi(monthlyWords = 100_000): Promise<{ tenant: Tenant; api: ApiClient }> {
  const tenant = await createTenant(stack, { monthlyWords });
  return { tenant, api: apiClient(stack.baseUrl, tenant.token) };
}

async function estimate(api: ApiClient, body: unknown) {
  const res = await api.post("/v1/articles/estimate", body);
  expect(res.status).toBe(200);
  expect(res.body.success).toBe(true);
  return res.body.data;
}

/** A custom single-step workflow without research, for the rules that need one. */
async function singleStepType(api: ApiClient, projectId: number, articleType: string) {
  const res = await api.post(`/v1/projects/${projectId}/workflows`, {
    article_type: articleType,
    step_number: 1,
    step_name: "Write",
    system: "You write.",
    user: "Write about {title}.",
    output_format: "markdown",
  });
  expect(res.status).toBe(201);
}

const articleTotal = async (api: ApiClient) => (await api.get("/v1/articles")).body.meta.total;

describe("the same refusals as creation", () => {
  test("a handful of bad bodies get creation's 422 word for word; nothing is created or reserved", async () => {
    const { tenant, api } = await tenantWithApi();
    await singleStepType(api, tenant.projectId, "plain_notes");
    const bad: { label: string; body?: unknown; raw?: string }[] = [
      { label: "empty object", body: {} },
      { label: "not an object", body: [1, 2] },
      { label: "malformed JSON", raw: '{"title": ' },
      { label: "several field errors", body: articleBody(tenant.projectId, { title: "ab", tone: "sarcastic", target_word_count: 50, keywords: 7 }) },
      { label: "unknown article type", body: articleBody(tenant.projectId, { article_type: "no_such_type" }) },
      { label: "research on a type without a research step", body: articleBody(tenant.projectId, { article_type: "plain_notes", research_enabled: true }) },
      { label: "batch with a multi-step workflow", body: articleBody(tenant.projectId, { article_type: "blog_post", use_batch_api: true }) },
      { label: "unknown model", body: articleBody(tenant.projectId, { model: "simulator:no-such-model" }) },
      { label: "brand voice that does not exist", body: articleBody(tenant.projectId, { brand_voice_id: 999_999_999 }) },
    ];
    for (const { label, body, raw } of bad) {
      const opts = raw === undefined ? {} : { rawBody: raw };
      const created = await api.post("/v1/articles", body, opts);
      const estimated = await api.post("/v1/articles/estimate", body, opts);
      expect({ label, status: estimated.status }).toEqual({ label, status: 422 });
      expect({ label, body: estimated.body }).toEqual({ label, body: created.body });
    }
    expect(await articleTotal(api)).toBe(0);
    expect(await wordUsage(stack, tenant.accountId)).toMatchObject({ reserved: 0, used: 0, remaining: 100_000 });
  });

  test("project access as creation: 404 for another account's project, 403 without update access", async () => {
    const { tenant, api } = await tenantWithApi();
    const stranger = await createTenant(stack);
    const foreign = articleBody(stranger.projectId);
    const createdForeign = await api.post("/v1/articles", foreign);
    const estimatedForeign = await api.post("/v1/articles/estimate", foreign);
    expect(estimatedForeign.status).toBe(404);
    expect(estimatedForeign.body).toEqual(createdForeign.body);

    const viewer = apiClient(stack.baseUrl, (await addMemberWithKey(stack, tenant, "viewer")).token);
    const own = articleBody(tenant.projectId);
    const createdByViewer = await viewer.post("/v1/articles", own);
    const estimatedByViewer = await viewer.post("/v1/articles/estimate", own);
    expect(estimatedByViewer.status).toBe(403);
    expect(estimatedByViewer.body).toEqual(createdByViewer.body);

    const anonymous = await apiClient(stack.baseUrl).post("/v1/articles/estimate", own);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.code).toBe("UNAUTHENTICATED");
  });
});

describe("words", () => {
  test("the words estimated are the words creation then reserves; the allowance read through the API moves by exactly them", async () => {
    const { tenant, api } = await tenantWithApi(10_000);
    const body = articleBody(tenant.projectId, { target_word_count: 1234 });

    const before = await estimate(api, body);
    expect(before).toMatchObject({ words_to_reserve: Math.ceil(1234 * 1.2), words_remaining: 10_000, fits_allowance: true });
    expect(before.allowance_period).toMatch(/^\d{4}-\d{2}$/);
    expect(await wordUsage(stack, tenant.accountId)).toMatchObject({ reserved: 0, remaining: 10_000 });

    expect((await api.post("/v1/articles", body)).status).toBe(201);
    expect(await wordUsage(stack, tenant.accountId)).toMatchObject({ reserved: before.words_to_reserve, remaining: 10_000 - before.words_to_reserve });

    const after = await estimate(api, body);
    expect(after.words_remaining).toBe(before.words_remaining - before.words_to_reserve);
    expect(after.words_to_reserve).toBe(before.words_to_reserve);
  });

  test("a body the allowance cannot cover is still estimated, with fits_allowance false, while creation refuses it", async () => {
    const { tenant, api } = await tenantWithApi(1000);
    const body = articleBody(tenant.projectId, { target_word_count: 1000 });
    const answer = await estimate(api, body);
    expect(answer).toMatchObject({ words_to_reserve: 1200, words_remaining: 1000, fits_allowance: false });
    const created = await api.post("/v1/articles", body);
    expect(created.status).toBe(422);
    expect(Object.keys(created.body.errors)).toEqual(["target_word_count"]);
  });

  test("estimating creates, reserves and claims nothing, however often it is asked", async () => {
    const { tenant, api } = await tenantWithApi(10_000);
    const body = articleBody(tenant.projectId, { target_word_count: 2000 });
    const key = `estimate-${crypto.randomUUID()}`;
    for (let i = 0; i < 3; i++) {
      const res = await api.post("/v1/articles/estimate", body, { headers: { "idempotency-key": key } });
      expect(res.status).toBe(200);
      expect(res.headers.get("idempotent-replayed")).toBeNull();
    }
    expect(await articleTotal(api)).toBe(0);
    expect(await wordUsage(stack, tenant.accountId)).toMatchObject({ reserved: 0, used: 0, remaining: 10_000 });

    // The key is still unused: creation with it creates, and only a repeat replays.
    const first = await api.post("/v1/articles", body, { headers: { "idempotency-key": key } });
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const repeat = await api.post("/v1/articles", body, { headers: { "idempotency-key": key } });
    expect(repeat.headers.get("idempotent-replayed")).toBe("true");
    expect(repeat.body.data.id).toBe(first.body.data.id);
    expect(await wordUsage(stack, tenant.accountId)).toMatchObject({ reserved: 2400 });
  });
});

describe("cost range", () => {
  test("follows the documented rule: a single-step workflow at sim-fast's prices", async () => {
    const { tenant, api } = await tenantWithApi();
    await singleStepType(api, tenant.projectId, "one_step");
    // Title "How to brew pour-over coffee": 5 words, the only text the request sends.
    const answer = await estimate(api, articleBody(tenant.projectId, { article_type: "one_step", target_word_count: 1000 }));
    expect(answer).toMatchObject({ article_type: "one_step", builtin_workflow: false, steps: 1, model: "simulator:sim-fast", fallback_model: null });
    // tokens(w) = ceil(4w/3); 200 instruction tokens per step at least, 750 at most; 1,200 words reserved.
    expect(answer.tokens).toEqual({ prompt: { min: 7 + 200, max: 7 + 750 }, completion: { min: 1334, max: 1600 } });
    // (207 × 0.10 + 1334 × 0.40) / 10^6 = 0.0005543, down to 0.000554; (757 × 0.10 + 1600 × 0.40) / 10^6 = 0.0007157, up to 0.000716.
    expect(answer.cost_range).toEqual({ min: "0.000554", max: "0.000716" });
  });

  test("grows with the model's prices, the workflow's steps, research and the humanization pass; batch halves it", async () => {
    const { tenant, api } = await tenantWithApi();
    const body = (extra: Record<string, unknown>) => articleBody(tenant.projectId, { target_word_count: 1500, ...extra });
    const amount = (value: string) => Number(value);
    const fast = await estimate(api, body({ article_type: "blog_post" }));
    expect(fast).toMatchObject({ builtin_workflow: true, steps: 5, model: "simulator:sim-fast" });
    expect(amount(fast.cost_range.min)).toBeGreaterThan(0);
    expect(amount(fast.cost_range.min)).toBeLessThan(amount(fast.cost_range.max));

    const pro = await estimate(api, body({ article_type: "blog_post", model: "simulator:sim-pro" }));
    expect(pro).toMatchObject({ model: "simulator:sim-pro", fallback_model: "simulator:sim-fast" });
    expect(amount(pro.cost_range.min)).toBeGreaterThan(amount(fast.cost_range.min));
    expect(amount(pro.cost_range.max)).toBeGreaterThan(amount(fast.cost_range.max));

    const single = await estimate(api, body({ article_type: "song_meaning_single_model_5" }));
    expect(single.steps).toBe(1);
    expect(amount(single.cost_range.max)).toBeLessThan(amount(fast.cost_range.max));

    const researched = await estimate(api, body({ article_type: "blog_post", research_enabled: true }));
    expect(researched.tokens.prompt.max).toBeGreaterThan(fast.tokens.prompt.max);
    const humanized = await estimate(api, body({ article_type: "blog_post", humanize: true }));
    expect(humanized.tokens.completion.min).toBeGreaterThan(fast.tokens.completion.min);
    expect(amount(humanized.cost_range.max)).toBeGreaterThan(amount(fast.cost_range.max));

    const live = await estimate(api, body({ article_type: "song_meaning_single_model_5", model: "simulator:sim-batch" }));
    const batched = await estimate(api, body({ article_type: "song_meaning_single_model_5", model: "simulator:sim-batch", use_batch_api: true }));
    expect(batched.tokens).toEqual(live.tokens);
    // Half, give or take the rounding of each bound to a millionth of a dollar.
    expect(Math.abs(amount(batched.cost_range.max) - amount(live.cost_range.max) / 2)).toBeLessThanOrEqual(0.000001);
    expect(Math.abs(amount(batched.cost_range.min) - amount(live.cost_range.min) / 2)).toBeLessThanOrEqual(0.000001);
  });
});

describe("rate limit", () => {
  test("an estimate counts in the articles limit, like creation", async () => {
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 55_000) await Bun.sleep(60_000 - intoMinute + 100);
    const { tenant, api } = await tenantWithApi();
    const listed = await api.get("/v1/articles");
    const estimated = await api.post("/v1/articles/estimate", articleBody(tenant.projectId));
    expect(estimated.status).toBe(200);
    expect(Number(estimated.headers.get("ratelimit-remaining"))).toBe(Number(listed.headers.get("ratelimit-remaining")) - 1);
  });
});
