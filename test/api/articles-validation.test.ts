// POST /v1/articles refusals (spec 4.1, 7, 8): every parameter's rule, the cross-field rules,
// and every failing field reported at once in `{message, errors}`; nothing created, nothing reserved.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { useStack, type TestStack } from "../harness/stack.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { addMemberWithKey, createProject, createTenant, type Tenant } from "../harness/tenants.ts";
import { articleBody } from "../harness/articles.ts";
import { storeClient } from "../harness/service-clients.ts";
import { holdGeneration, wordUsage, type GenerationHold } from "./articles-fixtures.ts";

let stack: TestStack;
let hold: GenerationHold;
let tenant: Tenant;
let api: ApiClient;

beforeAll(async () => {
  stack = await useStack();
  hold = await holdGeneration(stack);
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
});

afterAll(async () => {
  await hold.release();
});

/** Posts and expects a 422 in the validation shape; returns the errors map. */
async function refused(body: unknown, opts: { rawBody?: string } = {}): Promise<Record<string, string[]>> {
  const res = opts.rawBody === undefined ? await api.post("/v1/articles", body) : await api.post("/v1/articles", undefined, { rawBody: opts.rawBody });
  expect(res.status).toBe(422);
  expect(typeof res.body.message).toBe("string");
  expect(res.body.success).toBeUndefined();
  for (const messages of Object.values(res.body.errors as Record<string, string[]>)) {
    expect(messages.length).toBeGreaterThan(0);
    for (const m of messages) expect(typeof m).toBe("string");
  }
  return res.body.errors;
}

const step = (overrides: Record<string, unknown> = {}) => ({
  article_type: "field_notes",
  step_number: 1,
  step_name: "Write",
  system: "You write field notes.",
  user: "Write {title}.",
  output_format: "markdown",
  ...overrides,
});

describe("POST /v1/articles validation", () => {
  test("an empty body names every required field at once", async () => {
    const errors = await refused({});
    expect(Object.keys(errors).sort()).toEqual(["article_type", "language", "point_of_view", "project_id", "target_word_count", "title", "tone"].sort());
    expect(errors.title[0]).toContain("required");
  });

  test("every optional parameter's rule, all failures reported in one answer", async () => {
    const errors = await refused(
      articleBody(tenant.projectId, {
        title: "ab",
        target_word_count: 10_001,
        tone: "sarcastic",
        point_of_view: "fourth_person",
        language: "xx",
        target_keyword: "k".repeat(256),
        keywords: Array.from({ length: 16 }, (_, i) => `kw${i}`),
        country_targeting: "ZZ",
        research_enabled: "yes",
        research_max_sources: 21,
        research_min_content_words: 49,
        webhook_url: "ftp://example.com/hook",
        use_batch_api: 1,
        humanize: "true",
        additional_context: "c".repeat(25_001),
        additional_instruction: "i".repeat(2001),
        target_audience: "a".repeat(1001),
        include_key_takeaways: "no",
        include_faq: 0,
        heading_capitalization: "upper",
        status: "completed",
        research_include_domains: ["example.com", "not a domain"],
        research_exclude_domains: Array.from({ length: 51 }, (_, i) => `d${i}.example.com`),
        research_max_words_per_source: 99,
        image_count: 6,
        image_aspect_ratio: "2:1",
        brand_voice_id: "one",
        image_preset_id: 0,
        model: 42,
      }),
    );
    expect(Object.keys(errors).sort()).toEqual(
      [
        "title",
        "target_word_count",
        "tone",
        "point_of_view",
        "language",
        "target_keyword",
        "keywords",
        "country_targeting",
        "research_enabled",
        "research_max_sources",
        "research_min_content_words",
        "webhook_url",
        "use_batch_api",
        "humanize",
        "additional_context",
        "additional_instruction",
        "target_audience",
        "include_key_takeaways",
        "include_faq",
        "heading_capitalization",
        "status",
        "research_include_domains.1",
        "research_exclude_domains",
        "research_max_words_per_source",
        "image_count",
        "image_aspect_ratio",
        "brand_voice_id",
        "image_preset_id",
        "model",
      ].sort(),
    );
  });

  test("limits are inclusive at both ends", async () => {
    const edges = articleBody(tenant.projectId, {
      title: "abc",
      target_word_count: 100,
      research_max_sources: 20,
      research_min_content_words: 5000,
      research_max_words_per_source: 10_000,
      keywords: Array.from({ length: 15 }, () => "k".repeat(80)),
      image_count: 5,
      webhook_url: `https://example.com/${"p".repeat(480)}`,
    });
    const res = await api.post("/v1/articles", edges);
    expect(res.status).toBe(201);
    const low = await refused(articleBody(tenant.projectId, { target_word_count: 99, research_max_sources: 0, image_count: -1 }));
    expect(Object.keys(low).sort()).toEqual(["image_count", "research_max_sources", "target_word_count"]);
  });

  test("keywords: a comma-separated string is split and checked like an array", async () => {
    const tooMany = await refused(articleBody(tenant.projectId, { keywords: Array.from({ length: 16 }, (_, i) => `k${i}`).join(",") }));
    expect(tooMany.keywords[0]).toContain("15");
    const tooLong = await refused(articleBody(tenant.projectId, { keywords: `fine, ${"x".repeat(81)}` }));
    expect(Object.keys(tooLong)).toEqual(["keywords.1"]);
    const wrongType = await refused(articleBody(tenant.projectId, { keywords: 7 }));
    expect(Object.keys(wrongType)).toEqual(["keywords"]);
  });

  test("webhook_url must be an absolute http(s) URL of at most 500 characters", async () => {
    expect(Object.keys(await refused(articleBody(tenant.projectId, { webhook_url: "not a url" })))).toEqual(["webhook_url"]);
    expect(Object.keys(await refused(articleBody(tenant.projectId, { webhook_url: `https://example.com/${"p".repeat(481)}` })))).toEqual(["webhook_url"]);
  });

  test("malformed JSON and non-object bodies are 422", async () => {
    const malformed = await refused(undefined, { rawBody: '{"title": "unterminated' });
    expect(Object.keys(malformed)).toEqual(["body"]);
    expect(Object.keys(await refused([articleBody(tenant.projectId)]))).toEqual(["body"]);
  });

  test("an unknown article type is 422 on article_type, together with other field errors", async () => {
    const errors = await refused(articleBody(tenant.projectId, { article_type: "haiku", title: "x" }));
    expect(Object.keys(errors).sort()).toEqual(["article_type", "title"]);
  });

  test("a custom type is accepted only in its own project", async () => {
    const other = await createProject(stack, tenant.accountId, "Field project");
    const made = await api.post(`/v1/projects/${other}/workflows`, step());
    expect(made.status).toBe(201);
    expect(Object.keys(await refused(articleBody(tenant.projectId, { article_type: "field_notes" })))).toEqual(["article_type"]);
    const res = await api.post("/v1/articles", articleBody(other, { article_type: "field_notes" }));
    expect(res.status).toBe(201);
    expect(res.body.data.article_type).toBe("field_notes");
  });

  test("research_enabled needs a workflow step that uses research", async () => {
    const errors = await refused(articleBody(tenant.projectId, { article_type: "song_meaning_single_model_5", research_enabled: true }));
    expect(Object.keys(errors)).toEqual(["research_enabled"]);
    const project = await createProject(stack, tenant.accountId, "Research project");
    expect((await api.post(`/v1/projects/${project}/workflows`, step({ article_type: "digest", include_research: true }))).status).toBe(201);
    expect((await api.post("/v1/articles", articleBody(project, { article_type: "digest", research_enabled: true }))).status).toBe(201);
  });

  test("use_batch_api needs a single-step workflow and a batch-capable model", async () => {
    const multiStep = await refused(articleBody(tenant.projectId, { article_type: "blog_post", use_batch_api: true, model: "simulator:sim-batch" }));
    expect(Object.keys(multiStep)).toEqual(["use_batch_api"]);
    const noBatchModel = await refused(articleBody(tenant.projectId, { article_type: "song_meaning_single_model_5", use_batch_api: true, model: "simulator:sim-fast" }));
    expect(Object.keys(noBatchModel)).toEqual(["use_batch_api"]);
  });

  test("status accepts only queued or batching, and batching only with use_batch_api", async () => {
    for (const status of ["writing", "completed", "published", "failed", "polishing"]) {
      expect(Object.keys(await refused(articleBody(tenant.projectId, { status })))).toEqual(["status"]);
    }
    expect(Object.keys(await refused(articleBody(tenant.projectId, { status: "batching" })))).toEqual(["status"]);
  });

  test("research max words per source must be at least research_min_content_words", async () => {
    const errors = await refused(articleBody(tenant.projectId, { research_min_content_words: 800, research_max_words_per_source: 500 }));
    expect(Object.keys(errors)).toEqual(["research_max_words_per_source"]);
    const defaults = await refused(articleBody(tenant.projectId, { research_min_content_words: 1200 }));
    expect(Object.keys(defaults)).toEqual(["research_max_words_per_source"]);
  });

  test("an inactive or unknown model is 422 on model", async () => {
    expect(Object.keys(await refused(articleBody(tenant.projectId, { model: "simulator:no-such-model" })))).toEqual(["model"]);
  });

  test("brand voices and image presets must belong to the article's project", async () => {
    const store = storeClient(stack, "operator");
    const other = await createProject(stack, tenant.accountId, "Styles elsewhere");
    const { brandVoice: ownVoice } = await store.createBrandVoice({ projectId: BigInt(tenant.projectId), name: "Warm", description: "Warm and direct." });
    const { brandVoice: otherVoice } = await store.createBrandVoice({ projectId: BigInt(other), name: "Dry", description: "Dry wit." });
    const { imagePreset: ownPreset } = await store.createImagePreset({ projectId: BigInt(tenant.projectId), name: "Film", style: "35mm film grain" });
    const { imagePreset: otherPreset } = await store.createImagePreset({ projectId: BigInt(other), name: "Flat", style: "flat vector" });

    const errors = await refused(articleBody(tenant.projectId, { brand_voice_id: Number(otherVoice!.id), image_preset_id: Number(otherPreset!.id) }));
    expect(Object.keys(errors).sort()).toEqual(["brand_voice_id", "image_preset_id"]);
    const missing = await refused(articleBody(tenant.projectId, { brand_voice_id: 999_999_999, image_preset_id: 999_999_999 }));
    expect(Object.keys(missing).sort()).toEqual(["brand_voice_id", "image_preset_id"]);

    const ok = await api.post("/v1/articles", articleBody(tenant.projectId, { brand_voice_id: Number(ownVoice!.id), image_preset_id: Number(ownPreset!.id) }));
    expect(ok.status).toBe(201);
    const { article } = await store.getArticle({ identifier: ok.body.data.external_id });
    expect(article!.settings!.brandVoiceId).toBe(ownVoice!.id);
    expect(article!.settings!.imagePresetId).toBe(ownPreset!.id);
  });

  test("refusals create nothing and reserve nothing", async () => {
    const own = await createTenant(stack, { monthlyWords: 5000 });
    const client = apiClient(stack.baseUrl, own.token);
    expect((await client.post("/v1/articles", articleBody(own.projectId, { tone: "sarcastic" }))).status).toBe(422);
    expect((await client.post("/v1/articles", articleBody(own.projectId, { article_type: "haiku" }))).status).toBe(422);
    expect(await wordUsage(stack, own.accountId)).toMatchObject({ reserved: 0, used: 0 });
    expect((await client.get("/v1/articles")).body.data).toEqual([]);
  });
});

describe("POST /v1/articles access", () => {
  test("401 without a key, in the gate shape", async () => {
    const res = await apiClient(stack.baseUrl).post("/v1/articles", articleBody(tenant.projectId));
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("UNAUTHENTICATED");
  });

  test("404 for another account's project, before any field error", async () => {
    const stranger = await createTenant(stack);
    const res = await api.post("/v1/articles", articleBody(stranger.projectId, { tone: "sarcastic" }));
    expect(res.status).toBe(404);
    expect(Object.keys(res.body)).toEqual(["message"]);
  });

  test("403 for a viewer, and for a member limited to other projects", async () => {
    const viewer = await addMemberWithKey(stack, tenant, "viewer");
    const res = await apiClient(stack.baseUrl, viewer.token).post("/v1/articles", articleBody(tenant.projectId));
    expect(res.status).toBe(403);
    expect(Object.keys(res.body)).toEqual(["message"]);
    const elsewhere = await createProject(stack, tenant.accountId, "Limited");
    const limited = await addMemberWithKey(stack, tenant, "editor", [elsewhere]);
    expect((await apiClient(stack.baseUrl, limited.token).post("/v1/articles", articleBody(tenant.projectId))).status).toBe(403);
    expect((await apiClient(stack.baseUrl, limited.token).post("/v1/articles", articleBody(elsewhere))).status).toBe(201);
  });
});
