// The batch calls webhook-dispatcher makes to article-store: many articles read by external_id
// (BatchGetArticlesByExternalId) and many delivery attempts recorded in one transaction
// (RecordDeliveries), each record with the rules of RecordDeliveryAttempt, MarkPublished and
// MarkDeliveryFailed, and one record's refusal leaving the others made.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Code, ConnectError } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useStack, type TestStack } from "../harness/stack.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { articleBody } from "../harness/articles.ts";
import { lifecycleClient, storeClient } from "../harness/service-clients.ts";
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

const read = async (id: number) => (await api.get(`/v1/articles/${id}`)).body.data;

/** A completed article (generation is held; the test finishes it), with its version. */
async function completedArticle(): Promise<{ id: number; externalId: string; versionId: bigint }> {
  const res = await api.post("/v1/articles", articleBody(tenant.projectId, { webhook_url: "https://hooks.example.com/batch" }));
  expect(res.status).toBe(201);
  const externalId: string = res.body.data.external_id;
  const { article } = await lifecycle.completeGeneration({ externalId, content: "Body", actualWordCount: 1, aiModelUsed: "simulator:sim-fast", cost: "0" });
  return { id: res.body.data.id, externalId, versionId: article!.currentVersionId! };
}

function attempt(versionId: bigint, n: number, succeeded: boolean) {
  return { deliveryId: `msg_batch_${versionId}`, attempt: n, attemptedAt: timestampFromDate(new Date()), statusCode: succeeded ? 200 : 503, durationMs: 7, succeeded, versionId };
}

const log = async (externalId: string) => (await inspect.listDeliveryAttempts({ externalId })).attempts.map((a) => [a.attempt, a.statusCode, a.succeeded]);

describe("RecordDeliveries", () => {
  test("attempts of several articles: logged, published or marked failed, each as the single calls would", async () => {
    const [a, b, c] = await Promise.all([completedArticle(), completedArticle(), completedArticle()]);
    await read(a.id); // the gateway now remembers a as completed
    const { results } = await delivery.recordDeliveries({
      records: [
        { externalId: a.externalId, attempt: attempt(a.versionId, 1, true), ending: { case: "published", value: true } },
        { externalId: b.externalId, attempt: attempt(b.versionId, 1, false) },
        { externalId: c.externalId, attempt: attempt(c.versionId, 3, false), ending: { case: "deliveryFailureReason", value: "all 3 attempts failed" } },
      ],
    });
    expect(results.map((r) => r.error)).toEqual([undefined, undefined, undefined]);

    // Announced before the call answered: the gateway shows the change at once.
    expect(await read(a.id)).toMatchObject({ status: "published", published_version_id: Number(a.versionId) });
    expect(await read(b.id)).toMatchObject({ status: "completed", published_version_id: null });
    const failed = (await storeClient(stack).getArticle({ identifier: c.externalId })).article!;
    expect(failed.status).toBe("completed");
    expect(failed.deliveryFailureReason).toBe("all 3 attempts failed");
    expect(await log(a.externalId)).toEqual([[1, 200, true]]);
    expect(await log(b.externalId)).toEqual([[1, 503, false]]);
    expect(await log(c.externalId)).toEqual([[3, 503, false]]);

    // Repeated (a retried call): nothing is added, the first failure time stays.
    await delivery.recordDeliveries({
      records: [
        { externalId: a.externalId, attempt: attempt(a.versionId, 1, true), ending: { case: "published", value: true } },
        { externalId: c.externalId, attempt: attempt(c.versionId, 3, false), ending: { case: "deliveryFailureReason", value: "all 3 attempts failed" } },
      ],
    });
    expect(await log(a.externalId)).toEqual([[1, 200, true]]);
    const again = (await storeClient(stack).getArticle({ identifier: c.externalId })).article!;
    expect(again.deliveryFailedAt).toEqual(failed.deliveryFailedAt);
  });

  test("a record that cannot be made is answered with its error and changes nothing; the others are made", async () => {
    const [good, other, cancelled] = await Promise.all([completedArticle(), completedArticle(), (async () => {
      const res = await api.post("/v1/articles", articleBody(tenant.projectId));
      await lifecycleClient(stack, "gateway").cancelArticle({ externalId: res.body.data.external_id });
      return res.body.data.external_id as string;
    })()]);
    const { results } = await delivery.recordDeliveries({
      records: [
        { externalId: crypto.randomUUID(), attempt: attempt(1n, 1, true) },
        { externalId: good.externalId, attempt: { ...attempt(good.versionId, 0, false) } },
        { externalId: cancelled, attempt: attempt(1n, 1, true), ending: { case: "published", value: true } },
        // Another article's version: not this article's to publish, and its attempt is not logged either.
        { externalId: good.externalId, attempt: attempt(other.versionId, 1, true), ending: { case: "published", value: true } },
        { externalId: good.externalId, attempt: attempt(good.versionId, 1, false), ending: { case: "deliveryFailureReason", value: " " } },
        { externalId: good.externalId, attempt: attempt(good.versionId, 2, true), ending: { case: "published", value: true } },
      ],
    });
    expect(results.map((r) => r.error?.code ?? "ok")).toEqual(["not_found", "invalid_argument", "failed_precondition", "not_found", "invalid_argument", "ok"]);
    expect(results[2]!.error!.message).toContain("failed");
    expect(await log(good.externalId)).toEqual([[2, 200, true]]);
    expect(await read(good.id)).toMatchObject({ status: "published", published_version_id: Number(good.versionId) });
    expect(await log(cancelled)).toEqual([]);
  });

  test("an unfinished article cannot be published; more than 500 records is INVALID_ARGUMENT", async () => {
    const res = await api.post("/v1/articles", articleBody(tenant.projectId));
    const externalId: string = res.body.data.external_id;
    const { results } = await delivery.recordDeliveries({ records: [{ externalId, attempt: attempt(1n, 1, true), ending: { case: "published", value: true } }] });
    expect(results[0]!.error?.code).toBe("failed_precondition");

    const tooMany = Array.from({ length: 501 }, () => ({ externalId, attempt: attempt(1n, 1, false) }));
    const error = await delivery.recordDeliveries({ records: tooMany }).then(() => undefined, (e: unknown) => e);
    expect((error as ConnectError).code).toBe(Code.InvalidArgument);
  });
});

describe("BatchGetArticlesByExternalId", () => {
  test("answers the articles that exist; unknown and malformed ids are left out", async () => {
    const [a, b] = await Promise.all([completedArticle(), completedArticle()]);
    const { articles } = await storeClient(stack, "generation-runner").batchGetArticlesByExternalId({ externalIds: [a.externalId, crypto.randomUUID(), "not-a-uuid", b.externalId.toUpperCase(), a.externalId] });
    expect(articles.map((x) => x.externalId).sort()).toEqual([a.externalId, b.externalId].sort());
    expect(articles.find((x) => x.externalId === a.externalId)!.content).toBe("Body");

    const error = await storeClient(stack, "generation-runner")
      .batchGetArticlesByExternalId({ externalIds: Array.from({ length: 501 }, () => crypto.randomUUID()) })
      .then(() => undefined, (e: unknown) => e);
    expect((error as ConnectError).code).toBe(Code.InvalidArgument);
  });
});
