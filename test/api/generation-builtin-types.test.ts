// Every built-in article type generates a complete article on the simulator, through the public
// API; one article also exercises the finishing touches (images, humanization, originality, the
// settled quota and the completion webhook).
import { beforeAll, describe, expect, test } from "bun:test";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { createArticle } from "../harness/articles.ts";
import { eventually } from "../harness/eventually.ts";
import { articleBody, finished, isDecimal, runOf, waitForArticle, webhookReceiver, wordUsage } from "./generation-support.ts";

const BUILTIN_TYPES = [
  "blog_post",
  "ultimate_guide",
  "listicle",
  "product_review",
  "comparison",
  "tutorial",
  "news",
  "case_study",
  "song_meaning",
  "song_meaning_single_model_5",
];

let stack: TestStack;
let tenant: Tenant;
let api: ApiClient;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
});

describe("built-in article types", () => {
  test("each one generates a complete article", async () => {
    const created = await Promise.all(
      BUILTIN_TYPES.map((type) => createArticle(api, articleBody(tenant.projectId, { article_type: type, title: `Espresso at home: ${type}`, target_word_count: 100, target_keyword: "home espresso" }))),
    );
    for (const article of created) {
      expect(article.status).toBe("queued");
      expect(article.ai_model_used).toBeNull();
      expect(article.current_step).toBeNull();
    }
    const done = await Promise.all(created.map((a) => waitForArticle(api, a.external_id, finished, 90_000)));
    for (const [i, article] of done.entries()) {
      const type = BUILTIN_TYPES[i];
      expect({ type, status: article.status, failure: article.failure_reason }).toEqual({ type, status: "completed", failure: article.failure_reason });
      expect(article.content.length).toBeGreaterThan(100);
      expect(article.original_content).toBe(article.content);
      expect(article.actual_word_count).toBeGreaterThan(50);
      expect(article.ai_model_used).toBe("simulator:sim-fast");
      expect(isDecimal(article.cost) && Number(article.cost) > 0).toBe(true);
      expect(article.current_version_id).toEqual(expect.any(Number));
      expect(article.ai_detection_score).toEqual(expect.any(Number));
      expect(article.originality_checked_at).toEqual(expect.any(String));
      // The multi-step built-ins end with a meta step's description; the single-step one has none.
      if (type === "song_meaning_single_model_5") expect(article.description).toBeNull();
      else expect(article.description.length).toBeGreaterThan(10);

      const run = await runOf(stack, article.external_id);
      expect(run!.steps.length).toBe(type === "song_meaning_single_model_5" ? 1 : 5);
      // The article's cost is the sum of the checkpointed steps, each billed once.
      expect(Number(article.cost)).toBeCloseTo(Number(run!.cost), 10);
    }
  }, 120_000);

  test("finishing touches: images, humanization, originality, settled words and the webhook", async () => {
    const hook = webhookReceiver();
    // Its own account, so the ledger shows this article alone.
    const own = await createTenant(stack);
    const ownApi = apiClient(stack.baseUrl, own.token);
    try {
      const created = await createArticle(
        ownApi,
        articleBody(own.projectId, { title: "Grinding coffee for espresso", target_word_count: 120, humanize: true, image_count: 2, image_aspect_ratio: "16:9", webhook_url: hook.url }),
      );
      const done = await waitForArticle(ownApi, created.external_id, finished, 90_000);
      expect(done.status).toMatch(/^(completed|published)$/);
      // The humanized version is current; the generation output is kept as original_content.
      expect(done.original_content).toEqual(expect.any(String));
      expect(done.content).not.toBe(done.original_content);
      // The runner records the humanized version on its run just after article-store makes it current.
      const run = await eventually(() => runOf(stack, created.external_id), (r) => r?.humanizedVersionId !== undefined, 10_000, "the run's humanized version");
      expect(done.current_version_id).toBe(Number(run!.humanizedVersionId));
      expect(run!.images.map((i) => [i.position, i.size, i.mediaType])).toEqual([
        [1, "1536x1024", "image/png"],
        [2, "1536x1024", "image/png"],
      ]);
      expect(run!.images.every((i) => i.byteSize > 0)).toBe(true);

      await eventually(async () => hook.received.length, (n) => n > 0, 15_000, "the completion webhook");
      expect(hook.received.length).toBe(1);
      const payload = hook.received[0]!.body;
      expect(payload.data.external_id).toBe(created.external_id);
      expect(payload.content.markdown).toBe(done.content);

      // Settled before the webhook was handed over: the reservation (120% of the target) became
      // the words actually generated.
      const usage = await wordUsage(stack, own.accountId);
      expect(Number(usage.usedWords)).toBe(done.actual_word_count);
      expect(Number(usage.reservedWords)).toBe(0);
    } finally {
      hook.stop();
    }
  }, 120_000);
});
