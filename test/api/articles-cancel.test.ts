// POST /v1/articles/{id}/cancel: a queued, writing or polishing article stops (its running model
// call aborted, no later step), ends failed with the cancel's reason and no webhook, and keeps
// only the words of the steps it finished; ended articles answer 422; a second cancel answers as
// the first; a cancel racing completion leaves exactly one of the two.
import { beforeAll, describe, expect, test } from "bun:test";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { addMemberWithKey, createTenant, type Tenant } from "../harness/tenants.ts";
import { createArticle } from "../harness/articles.ts";
import { articleBody, callsStartingWith, createWorkflow, finished, marker, waitForArticle, webhookReceiver, wordUsage } from "./generation-support.ts";
import { openEvents } from "./article-events-support.ts";
import { eventually } from "../harness/eventually.ts";

let stack: TestStack;

beforeAll(async () => {
  stack = await useStack();
});

// Far longer than any test: a step that is not aborted keeps its words reserved until the test fails.
const FOREVER = "[[sim:sleep=600000]]";
const RESERVED = Math.ceil(150 * 1.2);

/** An account of its own, so its ledger counts one article's words. */
async function ownTenant(): Promise<{ tenant: Tenant; api: ApiClient }> {
  const tenant = await createTenant(stack);
  return { tenant, api: apiClient(stack.baseUrl, tenant.token) };
}

/** Waits until the ledger holds nothing reserved, then answers the words used. */
async function settledWords(accountId: number): Promise<number> {
  for (;;) {
    const usage = await wordUsage(stack, accountId);
    if (Number(usage.reservedWords) === 0) return Number(usage.usedWords);
    await Bun.sleep(100);
  }
}

describe("cancelling a running article", () => {
  test("while writing: the running call stops, no later step runs, the finished step's words are settled, the stream says so, no webhook", async () => {
    const { tenant, api } = await ownTenant();
    const hook = webhookReceiver();
    try {
      const m = marker("writing");
      const type = marker("cancel-writing");
      await createWorkflow(api, tenant.projectId, type, [
        { user: `[[sim:echo]]alpha beta gamma ${m}` },
        { user: `${FOREVER}second ${m}` },
        { user: `[[sim:echo]]third ${m}` },
      ]);
      const created = await createArticle(api, articleBody(tenant.projectId, { article_type: type, webhook_url: hook.url }));
      expect(Number((await wordUsage(stack, tenant.accountId)).reservedWords)).toBe(RESERVED);
      // From the log's start: the step may have begun before the stream opened.
      const stream = await openEvents(stack.baseUrl, tenant.token, created.external_id, { lastEventId: "0-0" });
      await stream.until((e) => e.event === "step_started" && e.data.step === 2);

      const res = await api.post(`/v1/articles/${created.external_id}/cancel`);
      expect(res.status).toBe(200);
      expect(res.body.success).toBe(true);
      expect(res.body.message).toContain("cancelled");
      expect(res.body.data.status).toBe("failed");
      expect(res.body.data.failure_reason).toBe("Cancelled by the client.");

      // The stream ends with the cancel.
      await stream.done;
      expect(stream.ended).toBe(true);
      const last = stream.events[stream.events.length - 1]!;
      expect(last.event).toBe("failed");
      expect(last.data).toMatchObject({ status: "failed", cancelled: true, reason: "Cancelled by the client." });

      // Only step 1's four words count; the aborted step 2 and the never-started step 3 count nothing.
      expect(await settledWords(tenant.accountId)).toBe(4);
      // The article's cost is what its finished steps cost, to the cent of the breakdown.
      const costs = async () => {
        const [read, steps] = await Promise.all([api.get(`/v1/articles/${created.external_id}`), api.get(`/v1/articles/${created.external_id}/steps`)]);
        return { cost: read.body.data.cost as string, total: steps.body.data.total_cost as string };
      };
      const settled = await eventually(costs, ({ cost, total }) => cost === total, 10_000, "the cost to equal the breakdown");
      expect(Number(settled.total)).toBeGreaterThan(0);
      expect(await callsStartingWith(stack, m, "third")).toBe(0);
      const article = (await api.get(`/v1/articles/${created.external_id}`)).body.data;
      expect(article.status).toBe("failed");
      expect(article.failure_reason).toBe("Cancelled by the client.");
      expect(article.content).toBeNull();

      // Twice is harmless: the same answer again, with the article as it now reads (its final cost).
      const again = await api.post(`/v1/articles/${created.external_id}/cancel`);
      expect(again.status).toBe(200);
      expect(again.body.message).toBe(res.body.message);
      expect(again.body.data).toEqual((await api.get(`/v1/articles/${created.external_id}`)).body.data);
      await Bun.sleep(1000);
      expect(hook.received).toEqual([]);
      expect(await settledWords(tenant.accountId)).toBe(4);
    } finally {
      hook.stop();
    }
  });

  test("while polishing (the humanization pass): the pass stops and the generated words are settled", async () => {
    const { tenant, api } = await ownTenant();
    const m = marker("polishing");
    const type = marker("cancel-polishing");
    // The echoed output carries a sleep directive into the humanization prompt, so the pass runs on.
    await createWorkflow(api, tenant.projectId, type, [{ user: `[[sim:echo]]one two [[[sim:x]][sim:sleep=600000]] three ${m}` }]);
    const created = await createArticle(api, articleBody(tenant.projectId, { article_type: type, humanize: true }));
    // From the log's start: the pass may have begun before the stream opened.
    const stream = await openEvents(stack.baseUrl, tenant.token, created.external_id, { lastEventId: "0-0" });
    await stream.until((e) => e.event === "state" && e.data.status === "polishing" && e.data.current_step === "Humanizing");
    await waitForArticle(api, created.external_id, (a) => a.status === "polishing" && a.content !== null);

    const res = await api.post(`/v1/articles/${created.external_id}/cancel`);
    expect(res.status).toBe(200);
    await stream.done;
    expect(stream.events[stream.events.length - 1]!.data).toMatchObject({ cancelled: true });

    const article = (await api.get(`/v1/articles/${created.external_id}`)).body.data;
    expect(article.status).toBe("failed");
    expect(article.actual_word_count).toBeGreaterThan(0);
    expect(await settledWords(tenant.accountId)).toBe(article.actual_word_count);
  });

  test("while queued: the job ends at pickup and the whole reservation is given back", async () => {
    const { tenant, api } = await ownTenant();
    const m = marker("queued");
    const type = marker("cancel-queued");
    await createWorkflow(api, tenant.projectId, type, [{ user: `${FOREVER}only ${m}` }]);
    const created = await createArticle(api, articleBody(tenant.projectId, { article_type: type }));
    expect(created.status).toBe("queued");
    const res = await api.post(`/v1/articles/${created.id}/cancel`);
    expect(res.status).toBe(200);
    expect(res.body.data.status).toBe("failed");
    expect(await settledWords(tenant.accountId)).toBe(0);
    const stream = await openEvents(stack.baseUrl, tenant.token, created.id);
    await stream.done;
    expect(stream.events.map((e) => [e.event, e.data.cancelled])).toEqual([["failed", true]]);
  });

  test("while batching: the parked job ends, the batch's result is never taken, the whole reservation is given back", async () => {
    const { tenant, api } = await ownTenant();
    const created = await createArticle(
      api,
      articleBody(tenant.projectId, { article_type: "song_meaning_single_model_5", title: "What the song means", model: "simulator:sim-batch", use_batch_api: true }),
    );
    expect(created.status).toBe("batching");
    const res = await api.post(`/v1/articles/${created.external_id}/cancel`);
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ status: "failed", failure_reason: "Cancelled by the client." });

    // The simulator finishes its batches within a second; the article must not complete from it.
    await Bun.sleep(2000);
    const article = (await api.get(`/v1/articles/${created.external_id}`)).body.data;
    expect(article).toMatchObject({ status: "failed", failure_reason: "Cancelled by the client.", content: null });
    expect(await settledWords(tenant.accountId)).toBe(0);
    const stream = await openEvents(stack.baseUrl, tenant.token, created.external_id);
    await stream.done;
    expect(stream.events.map((e) => [e.event, e.data.cancelled])).toEqual([["failed", true]]);
  });
});

describe("what cannot be cancelled", () => {
  test("a completed article is 422 with a message and stays completed", async () => {
    const { tenant, api } = await ownTenant();
    const created = await createArticle(api, articleBody(tenant.projectId));
    const done = await waitForArticle(api, created.external_id, finished);
    const res = await api.post(`/v1/articles/${created.external_id}/cancel`);
    expect(res.status).toBe(422);
    expect(res.body.message).toContain("completed");
    expect((await api.get(`/v1/articles/${created.external_id}`)).body.data.status).toBe(done.status);
  });

  test("another account's article is 404; a viewer (no update access) gets 403", async () => {
    const { tenant, api } = await ownTenant();
    const created = await createArticle(api, articleBody(tenant.projectId));
    const stranger = await createTenant(stack);
    const theirs = await apiClient(stack.baseUrl, stranger.token).post(`/v1/articles/${created.id}/cancel`);
    expect(theirs.status).toBe(404);
    expect(theirs.body).toEqual({ message: "Article not found." });
    const viewer = await addMemberWithKey(stack, tenant, "viewer");
    expect((await apiClient(stack.baseUrl, viewer.token).post(`/v1/articles/${created.id}/cancel`)).status).toBe(403);
  });
});

describe("cancel racing completion", () => {
  test("exactly one wins: completed with its webhook, or failed-cancelled without one", async () => {
    const outcomes: string[] = [];
    for (const delayMs of [0, 100, 200, 300, 400]) {
      const { tenant, api } = await ownTenant();
      const hook = webhookReceiver();
      try {
        const m = marker("race");
        const type = marker("race");
        await createWorkflow(api, tenant.projectId, type, [{ user: `[[sim:sleep=200]][[sim:echo]]four words here ${m}` }]);
        const created = await createArticle(api, articleBody(tenant.projectId, { article_type: type, webhook_url: hook.url }));
        await Bun.sleep(delayMs);
        const res = await api.post(`/v1/articles/${created.external_id}/cancel`);
        const article = await waitForArticle(api, created.external_id, (a) => a.status === "failed" || a.status === "published");
        const words = await settledWords(tenant.accountId);
        if (res.status === 200) {
          outcomes.push("cancelled");
          expect(article.status).toBe("failed");
          await Bun.sleep(1000);
          expect(hook.received).toEqual([]);
          expect([0, 4]).toContain(words);
        } else {
          outcomes.push("completed");
          expect(res.status).toBe(422);
          expect(article.status).toBe("published");
          expect(hook.received).toHaveLength(1);
          expect(words).toBe(article.actual_word_count);
        }
      } finally {
        hook.stop();
      }
    }
    // Both outcomes are possible; each round ended in exactly one of them.
    expect(outcomes).toHaveLength(5);
  }, 90_000);
});
