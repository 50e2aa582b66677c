// POST /v1/articles, the happy paths (spec 4.1, 2.2): 201 at once with a queued article in the
// exact article shape, and its generation job in the queue under the article's external_id.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { useStack, type TestStack } from "../harness/stack.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { articleBody } from "../harness/articles.ts";
import { eventually } from "../harness/eventually.ts";
import { storeClient } from "../harness/service-clients.ts";
import { generationQueue, holdGeneration, wordUsage, type GenerationHold } from "./articles-fixtures.ts";

const ARTICLE_FIELDS = [
  "id",
  "external_id",
  "title",
  "description",
  "content",
  "original_content",
  "current_version_id",
  "published_version_id",
  "status",
  "article_type",
  "target_keyword",
  "keywords",
  "target_word_count",
  "actual_word_count",
  "tone",
  "point_of_view",
  "language",
  "country_targeting",
  "ai_model_used",
  "cost",
  "current_step",
  "humanize",
  "ai_detection_score",
  "originality_checked_at",
  "additional_context",
  "webhook_url",
  "project",
  "created_at",
  "updated_at",
  // Additive (docs/api.md, Behaviour: Images): the article's images, empty until it completes.
  "images",
  // Additive (docs/api.md, Live progress and cancellation): why a failed article failed, else null.
  "failure_reason",
  // Additive (docs/api.md, Publishing): its posts on the project's destinations, empty until published.
  "publications",
  // Additive (docs/api.md, Sources and citations): the pages its research read, how its text cites them.
  "sources",
  "citations",
  "citations_removed",
  // Additive (docs/api.md, Quality report): the current text against its brief, null until completed.
  "quality",
].sort();

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let stack: TestStack;
let hold: GenerationHold;
let tenant: Tenant;
let api: ApiClient;
const queue = () => generationQueue(stack);

beforeAll(async () => {
  stack = await useStack();
  hold = await holdGeneration(stack);
  tenant = await createTenant(stack, { audience: "home baristas" });
  api = apiClient(stack.baseUrl, tenant.token);
});

afterAll(async () => {
  await hold.release();
});

describe("POST /v1/articles", () => {
  test("answers 201 with a queued article in the 2.2 shape, creation nulls and cost 0.00", async () => {
    const res = await api.post(
      "/v1/articles",
      articleBody(tenant.projectId, {
        target_keyword: "pour-over coffee",
        keywords: "kettle, grind size , bloom",
        country_targeting: "US",
        additional_context: "Our shop sells V60 drippers.",
        webhook_url: "https://hooks.example.com/articles",
        humanize: true,
      }),
    );
    expect(res.status).toBe(201);
    expect(res.body.success).toBe(true);
    expect(typeof res.body.message).toBe("string");
    const a = res.body.data;
    expect(Object.keys(a).sort()).toEqual(ARTICLE_FIELDS);
    expect(a).toMatchObject({
      title: "How to brew pour-over coffee",
      status: "queued",
      article_type: "blog_post",
      target_keyword: "pour-over coffee",
      keywords: ["kettle", "grind size", "bloom"],
      target_word_count: 1000,
      actual_word_count: 0,
      tone: "friendly",
      point_of_view: "second_person",
      language: "en",
      country_targeting: "US",
      cost: "0.00",
      humanize: true,
      additional_context: "Our shop sells V60 drippers.",
      webhook_url: "https://hooks.example.com/articles",
      project: { id: tenant.projectId, name: "Test project" },
    });
    for (const field of ["content", "original_content", "current_version_id", "published_version_id", "ai_model_used", "current_step", "description", "ai_detection_score", "originality_checked_at", "quality"]) {
      expect(a[field]).toBeNull();
    }
    expect(Number.isInteger(a.id)).toBe(true);
    expect(a.external_id).toMatch(UUID);
    expect(a.created_at).toMatch(ISO);
    expect(a.updated_at).toMatch(ISO);
  });

  test("optional fields default to null, keywords to an empty array", async () => {
    const res = await api.post("/v1/articles", articleBody(tenant.projectId));
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ target_keyword: null, keywords: [], country_targeting: null, additional_context: null, webhook_url: null, humanize: false, publications: [] });
  });

  test("keywords sent as an array come back as the same array", async () => {
    const res = await api.post("/v1/articles", articleBody(tenant.projectId, { keywords: ["espresso", "crema"] }));
    expect(res.status).toBe(201);
    expect(res.body.data.keywords).toEqual(["espresso", "crema"]);
  });

  test("queues the generation job under the article's external_id", async () => {
    const res = await api.post("/v1/articles", articleBody(tenant.projectId), { headers: { "x-request-id": "creation-job-check-1" } });
    expect(res.status).toBe(201);
    const { queue: q, close } = queue();
    try {
      const job = await eventually(
        () => q.getJob(res.body.data.external_id),
        (j) => j !== undefined,
      );
      expect(job!.id).toBe(res.body.data.external_id);
      // With the creating request's id, which the run's log lines carry (unless a relay of another
      // replica sent the row, which knows no request: then the id is absent, never another one).
      expect(job!.data).toEqual({ externalId: res.body.data.external_id, ...(job!.data.requestId === undefined ? {} : { requestId: "creation-job-check-1" }) });
    } finally {
      await close();
    }
  });

  test("reserves 120% of target_word_count against the monthly allowance", async () => {
    const own = await createTenant(stack, { monthlyWords: 10_000 });
    const res = await apiClient(stack.baseUrl, own.token).post("/v1/articles", articleBody(own.projectId, { target_word_count: 1500 }));
    expect(res.status).toBe(201);
    expect(await wordUsage(stack, own.accountId)).toMatchObject({ reserved: 1800, used: 0, remaining: 8200 });
  });

  test("stores the generation settings the runner needs, the project's audience inherited", async () => {
    const res = await api.post(
      "/v1/articles",
      articleBody(tenant.projectId, {
        research_enabled: true,
        research_max_sources: 7,
        research_include_domains: ["Example.com", "docs.example.org"],
        image_count: 2,
        image_aspect_ratio: "16:9",
        include_faq: true,
        heading_capitalization: "sentence",
        additional_instruction: "Mention water temperature.",
      }),
    );
    expect(res.status).toBe(201);
    const { article } = await storeClient(stack).getArticle({ identifier: res.body.data.external_id });
    const s = article!.settings!;
    expect(s.targetAudience).toBe("home baristas");
    expect(s.model).toMatch(/^[a-z0-9_-]+:.+/);
    expect(s.builtinWorkflow).toBe(true);
    expect(s.workflowRevision).toBeGreaterThan(0);
    expect(s).toMatchObject({
      researchEnabled: true,
      researchMaxSources: 7,
      researchMinContentWords: 100,
      researchMaxWordsPerSource: 1000,
      researchIncludeDomains: ["example.com", "docs.example.org"],
      imageCount: 2,
      imageAspectRatio: "16:9",
      includeFaq: true,
      includeKeyTakeaways: false,
      headingCapitalization: "sentence",
      additionalInstruction: "Mention water temperature.",
      useBatchApi: false,
    });
    expect(s.researchExcludeDomains.length).toBe(4);
    expect(Number(s.reservedWords)).toBe(1200);
  });

  test("target_audience null means no audience, a string replaces the project's", async () => {
    const none = await api.post("/v1/articles", articleBody(tenant.projectId, { target_audience: null }));
    const own = await api.post("/v1/articles", articleBody(tenant.projectId, { target_audience: "cafe owners" }));
    expect(none.status).toBe(201);
    expect(own.status).toBe(201);
    const store = storeClient(stack);
    expect((await store.getArticle({ identifier: none.body.data.external_id })).article!.settings!.targetAudience).toBeUndefined();
    expect((await store.getArticle({ identifier: own.body.data.external_id })).article!.settings!.targetAudience).toBe("cafe owners");
  });

  test("use_batch_api on a single-step type with a batch model starts in batching", async () => {
    const res = await api.post("/v1/articles", articleBody(tenant.projectId, { article_type: "song_meaning_single_model_5", use_batch_api: true, model: "simulator:sim-batch" }));
    expect(res.status).toBe(201);
    expect(res.body.data.status).toBe("batching");
  });

  test("status override: queued is accepted", async () => {
    const res = await api.post("/v1/articles", articleBody(tenant.projectId, { status: "queued" }));
    expect(res.status).toBe(201);
    expect(res.body.data.status).toBe("queued");
  });

  test("shares the articles rate limit headers", async () => {
    const res = await api.post("/v1/articles", articleBody(tenant.projectId));
    expect(res.status).toBe(201);
    expect(res.headers.get("ratelimit-limit")).not.toBeNull();
  });
});
