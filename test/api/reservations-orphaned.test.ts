// Words held for a creation that died half-way: a gateway killed between reserving an article's
// words (QuotaService.ReserveWords, reference = its external_id) and creating the article leaves a
// reservation no article will settle or release. article-store's reconciler releases it once it has
// been held RECONCILE_STALE_AFTER_MS (3 s in the test stack, sweeping every second); a reservation
// whose article exists is left to the article's run, however long it has been held.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { apiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant } from "../harness/tenants.ts";
import { createArticle } from "../harness/articles.ts";
import { eventually } from "../harness/eventually.ts";
import { quotaClient } from "../harness/service-clients.ts";
import { articleBody, createWorkflow, marker, TERMINAL, wordUsage } from "./generation-support.ts";
import { reservedWordsFor } from "../../gateway/src/articles/create-article.ts";

let stack: TestStack;
// Well beyond the stale age plus a few sweeps, and still short of the test's own timeout.
const SWEPT_WITHIN_MS = 20_000;

beforeAll(async () => {
  stack = await useStack();
});

const runningArticles: { api: ReturnType<typeof apiClient>; id: string }[] = [];
afterAll(async () => {
  // The long run gives its runner slot back at once rather than after its sleep.
  for (const { api, id } of runningArticles) await api.post(`/v1/articles/${id}/cancel`).catch(() => {});
});

/** What a gateway killed right after ReserveWords leaves: the words held, no article. */
async function reserveWithoutArticle(accountId: number, words: number): Promise<string> {
  const reference = randomUUID();
  const { reservation } = await quotaClient(stack).reserveWords({ accountId: BigInt(accountId), reference, words: BigInt(words) });
  expect(reservation?.reference).toBe(reference);
  return reference;
}

test("a reservation whose article was never created is released by the reconciler's sweep", async () => {
  const tenant = await createTenant(stack, { monthlyWords: 10_000 });
  await reserveWithoutArticle(tenant.accountId, 1200);
  expect(await wordUsage(stack, tenant.accountId)).toMatchObject({ reservedWords: 1200n, usedWords: 0n, remainingWords: 8800n });

  const usage = await eventually(() => wordUsage(stack, tenant.accountId), (u) => u.reservedWords === 0n, SWEPT_WITHIN_MS, "the sweep to release the orphaned reservation");
  expect(usage).toMatchObject({ reservedWords: 0n, usedWords: 0n, remainingWords: 10_000n });
});

test("a reservation whose article exists is not released by the sweep while its article runs", async () => {
  const tenant = await createTenant(stack, { monthlyWords: 10_000 });
  const api = apiClient(stack.baseUrl, tenant.token);
  const type = marker("slow-run");
  await createWorkflow(api, tenant.projectId, type, [{ step_name: "Slow", user: "[[sim:sleep=20000]][[sim:echo]]slow {title}" }]);
  const article = await createArticle(api, articleBody(tenant.projectId, { article_type: type, title: marker("held") }));
  runningArticles.push({ api, id: article.external_id });
  const articleWords = BigInt(reservedWordsFor(article.target_word_count));
  expect(await wordUsage(stack, tenant.accountId)).toMatchObject({ reservedWords: articleWords });

  // Witnesses of the sweep: an orphan of the same account reserved after the article (so the
  // article's reservation is always the staler one) is released by a sweep that also listed the
  // article's. Two in turn, so at least two sweeps have judged the article's reservation.
  for (const words of [1000, 2000]) {
    await reserveWithoutArticle(tenant.accountId, words);
    expect((await wordUsage(stack, tenant.accountId)).reservedWords).toBe(articleWords + BigInt(words));
    const usage = await eventually(() => wordUsage(stack, tenant.accountId), (u) => u.reservedWords !== articleWords + BigInt(words), SWEPT_WITHIN_MS, `the sweep to release the orphan of ${words} words`);
    // Only the orphan went: the article's words are still held.
    expect(usage).toMatchObject({ reservedWords: articleWords, usedWords: 0n });
    // And its article is still running, so the sweep saw it held longer than the stale age with its article in flight.
    const { body } = await api.get(`/v1/articles/${article.external_id}`);
    expect(TERMINAL).not.toContain(body.data.status);
  }
});
