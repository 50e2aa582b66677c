// The lifecycle contract generation-runner and webhook-dispatcher record through
// (ArticleLifecycleService over gRPC), checked where a user sees it: GET /v1/articles/{id}.
// Every call is idempotent; failed is terminal.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useStack, type TestStack } from "../harness/stack.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { articleBody } from "../harness/articles.ts";
import { lifecycleClient } from "../harness/service-clients.ts";
import { holdGeneration, type GenerationHold } from "./articles-fixtures.ts";

let stack: TestStack;
let hold: GenerationHold;
let tenant: Tenant;
let api: ApiClient;
let lifecycle: ReturnType<typeof lifecycleClient>;
/** As the webhook dispatcher records deliveries, and as the operator inspects records. */
let delivery: ReturnType<typeof lifecycleClient>;
let inspect: ReturnType<typeof lifecycleClient>;

beforeAll(async () => {
  stack = await useStack();
  hold = await holdGeneration(stack);
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
  lifecycle = lifecycleClient(stack);
  delivery = lifecycleClient(stack, "webhook-dispatcher");
  inspect = lifecycleClient(stack, "operator");
});

afterAll(async () => {
  await hold.release();
});

async function newArticle(overrides: Record<string, unknown> = {}): Promise<{ id: number; externalId: string }> {
  const res = await api.post("/v1/articles", articleBody(tenant.projectId, overrides));
  expect(res.status).toBe(201);
  return { id: res.body.data.id, externalId: res.body.data.external_id };
}

const read = async (id: number) => (await api.get(`/v1/articles/${id}`)).body.data;

async function codeOf(call: Promise<unknown>): Promise<Code | "ok"> {
  try {
    await call;
    return "ok";
  } catch (error) {
    if (error instanceof ConnectError) return error.code;
    throw error;
  }
}

describe("ArticleLifecycleService", () => {
  test("progress, completion, humanized version, originality, publication", async () => {
    const { id, externalId } = await newArticle({ humanize: true });
    const created = await read(id);

    await lifecycle.recordProgress({ externalId, status: "writing", currentStep: "Outline", aiModelUsed: "simulator:sim-fast", cost: "0.0012" });
    let a = await read(id);
    expect(a).toMatchObject({ status: "writing", current_step: "Outline", ai_model_used: "simulator:sim-fast", cost: "0.0012" });
    expect(Date.parse(a.updated_at)).toBeGreaterThan(Date.parse(created.updated_at));

    const draft = { externalId, content: "# Pour-over\n\nBody.", description: "Meta", actualWordCount: 3, aiModelUsed: "simulator:sim-fast", cost: "0.0030", moreVersionsFollow: true };
    await lifecycle.completeGeneration(draft);
    await lifecycle.completeGeneration({ ...draft, content: "a retry must not replace it" });
    a = await read(id);
    expect(a).toMatchObject({ status: "polishing", content: draft.content, original_content: draft.content, description: "Meta", actual_word_count: 3, cost: "0.003" });
    const firstVersion = a.current_version_id;
    expect(Number.isInteger(firstVersion)).toBe(true);

    const human = { externalId, content: "# Pour-over\n\nHuman body.", kind: "humanized", actualWordCount: 4, complete: true, cost: "0.0041" };
    const added = await lifecycle.addVersion(human);
    const again = await lifecycle.addVersion({ ...human, content: "a retry must not add a version" });
    expect(again.versionId).toBe(added.versionId);
    a = await read(id);
    expect(a).toMatchObject({ status: "completed", content: human.content, original_content: draft.content, current_version_id: Number(added.versionId), current_step: null, actual_word_count: 4 });

    // A check of the replaced version does not show; one of the current version does.
    await lifecycle.recordOriginality({ externalId, versionId: BigInt(firstVersion), aiDetectionScore: 40 });
    expect((await read(id)).ai_detection_score).toBeNull();
    await lifecycle.recordOriginality({ externalId, versionId: added.versionId, aiDetectionScore: 12 });
    a = await read(id);
    expect(a.ai_detection_score).toBe(12);
    expect(a.originality_checked_at).toMatch(/Z$/);

    // A late progress report never moves a finished article back.
    await lifecycle.recordProgress({ externalId, status: "writing", currentStep: "Draft" });
    expect((await read(id)).status).toBe("completed");

    await delivery.markPublished({ externalId, versionId: added.versionId });
    await delivery.markPublished({ externalId, versionId: added.versionId });
    a = await read(id);
    expect(a).toMatchObject({ status: "published", published_version_id: Number(added.versionId) });
  });

  test("completion without a further pass finishes the article and clears current_step", async () => {
    const { id, externalId } = await newArticle();
    await lifecycle.recordProgress({ externalId, status: "writing", currentStep: "Draft" });
    await lifecycle.completeGeneration({ externalId, content: "Body", actualWordCount: 1, aiModelUsed: "simulator:sim-fast", cost: "0.01", moreVersionsFollow: false });
    expect(await read(id)).toMatchObject({ status: "completed", current_step: null, content: "Body", cost: "0.01" });
  });

  test("failed is terminal: later changes are FAILED_PRECONDITION, a repeated failure is a no-op", async () => {
    const { id, externalId } = await newArticle();
    await lifecycle.recordProgress({ externalId, status: "writing", currentStep: "Draft" });
    await lifecycle.failArticle({ externalId, reason: "upstream model error" });
    expect(await codeOf(lifecycle.failArticle({ externalId, reason: "retried" }))).toBe("ok");
    expect(await codeOf(lifecycle.recordProgress({ externalId, status: "writing" }))).toBe(Code.FailedPrecondition);
    expect(await codeOf(lifecycle.completeGeneration({ externalId, content: "x", actualWordCount: 1, aiModelUsed: "simulator:sim-fast", cost: "0" }))).toBe(Code.FailedPrecondition);
    expect(await codeOf(lifecycle.recordResearchSources({ externalId, sources: [] }))).toBe(Code.FailedPrecondition);
    expect(await codeOf(delivery.markDeliveryFailed({ externalId, reason: "x" }))).toBe(Code.FailedPrecondition);
    expect(await read(id)).toMatchObject({ status: "failed", content: null, current_step: null });
    const { article } = await lifecycle.failArticle({ externalId, reason: "again" });
    expect(article!.failureReason).toBe("upstream model error");
  });

  test("a completed article cannot fail, and an unfinished one cannot be published", async () => {
    const { externalId } = await newArticle();
    expect(await codeOf(delivery.markPublished({ externalId, versionId: 1n }))).toBe(Code.FailedPrecondition);
    expect(await codeOf(lifecycle.addVersion({ externalId, content: "x", kind: "humanized", actualWordCount: 1, complete: true }))).toBe(Code.FailedPrecondition);
    await lifecycle.completeGeneration({ externalId, content: "Body", actualWordCount: 1, aiModelUsed: "simulator:sim-fast", cost: "0" });
    expect(await codeOf(lifecycle.failArticle({ externalId, reason: "late" }))).toBe(Code.FailedPrecondition);
  });

  test("research sources: recording replaces the previous set", async () => {
    const { externalId } = await newArticle({ research_enabled: true });
    const source = (position: number, url: string) => ({ position, title: `Source ${position}`, url, wordCount: 500, fetchedAt: timestampFromDate(new Date()) });
    await lifecycle.recordResearchSources({ externalId, sources: [source(1, "https://a.example.com/"), source(2, "https://b.example.com/")] });
    await lifecycle.recordResearchSources({ externalId, sources: [source(1, "https://c.example.com/")] });
    const { sources } = await inspect.listResearchSources({ externalId });
    expect(sources.map((s) => s.url)).toEqual(["https://c.example.com/"]);
  });

  test("delivery attempts are logged once per (delivery, attempt); a failed delivery is recorded", async () => {
    const { externalId } = await newArticle({ webhook_url: "https://hooks.example.com/x" });
    const { article } = await lifecycle.completeGeneration({ externalId, content: "Body", actualWordCount: 1, aiModelUsed: "simulator:sim-fast", cost: "0" });
    const attempt = { deliveryId: "msg_1", attempt: 1, attemptedAt: timestampFromDate(new Date()), statusCode: 500, durationMs: 12, succeeded: false, versionId: article!.currentVersionId! };
    await delivery.recordDeliveryAttempt({ externalId, attempt });
    await delivery.recordDeliveryAttempt({ externalId, attempt });
    await delivery.recordDeliveryAttempt({ externalId, attempt: { ...attempt, attempt: 2, statusCode: undefined, error: "timeout" } });
    const { attempts } = await inspect.listDeliveryAttempts({ externalId });
    expect(attempts.map((a) => [a.attempt, a.statusCode ?? null, a.error ?? null])).toEqual([
      [1, 500, null],
      [2, null, "timeout"],
    ]);
    const failed = await delivery.markDeliveryFailed({ externalId, reason: "3 attempts failed" });
    expect(failed.article!.status).toBe("completed");
    expect(failed.article!.deliveryFailedAt).toBeDefined();
    expect(failed.article!.deliveryFailureReason).toBe("3 attempts failed");
  });

  test("a score sent with completion or with a version is that version's originality check, shown at once", async () => {
    const { id, externalId } = await newArticle();
    const done = { externalId, content: "Body", actualWordCount: 1, aiModelUsed: "simulator:sim-fast", cost: "0", moreVersionsFollow: false };
    // A bad score is refused and stores nothing: the article is still waiting for its completion.
    expect(await codeOf(lifecycle.completeGeneration({ ...done, aiDetectionScore: 101 }))).toBe(Code.InvalidArgument);
    expect(await codeOf(lifecycle.completeGeneration({ ...done, aiDetectionScore: -1 }))).toBe(Code.InvalidArgument);
    expect((await read(id)).status).toBe("queued");

    await lifecycle.completeGeneration({ ...done, aiDetectionScore: 37 });
    const completed = await read(id);
    expect(completed).toMatchObject({ status: "completed", ai_detection_score: 37 });
    expect(Date.parse(completed.originality_checked_at)).toBeGreaterThan(Date.now() - 60_000);

    const { id: humanizedId, externalId: humanized } = await newArticle({ humanize: true });
    await lifecycle.completeGeneration({ ...done, externalId: humanized, moreVersionsFollow: true });
    expect((await read(humanizedId)).ai_detection_score).toBeNull();
    expect(await codeOf(lifecycle.addVersion({ externalId: humanized, content: "Rewritten", kind: "humanized", actualWordCount: 1, complete: true, aiDetectionScore: 250 }))).toBe(
      Code.InvalidArgument,
    );
    const added = await lifecycle.addVersion({ externalId: humanized, content: "Rewritten", kind: "humanized", actualWordCount: 1, complete: true, aiDetectionScore: 9 });
    expect(added.article!.aiDetectionScore).toBe(9);
    expect(await read(humanizedId)).toMatchObject({ status: "completed", content: "Rewritten", ai_detection_score: 9 });
  });

  test("unknown or malformed external ids are NOT_FOUND; bad input is INVALID_ARGUMENT", async () => {
    expect(await codeOf(lifecycle.recordProgress({ externalId: crypto.randomUUID(), status: "writing" }))).toBe(Code.NotFound);
    expect(await codeOf(lifecycle.failArticle({ externalId: "not-a-uuid", reason: "x" }))).toBe(Code.NotFound);
    const { externalId } = await newArticle();
    expect(await codeOf(lifecycle.recordProgress({ externalId, status: "completed" }))).toBe(Code.InvalidArgument);
    expect(await codeOf(lifecycle.recordProgress({ externalId, status: "writing", cost: "-1" }))).toBe(Code.InvalidArgument);
    expect(await codeOf(lifecycle.recordOriginality({ externalId, versionId: 999999n, aiDetectionScore: 5 }))).toBe(Code.NotFound);
  });
});
