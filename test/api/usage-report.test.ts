// GET /v1/usage and the dashboard's usage: the numbers are the word quota ledger's. Articles made
// with two keys in two projects show in today's day and this hour by project and by key; the
// totals equal what the ledger answers (QuotaService.GetWordUsage); a cancelled article's words
// count nowhere; the rate-limit windows show the requests made.
import { beforeAll, expect, test } from "bun:test";
import { useStack, type TestStack } from "../harness/stack.ts";
import { addMemberWithKey, createProject, createTenant, type Tenant } from "../harness/tenants.ts";
import { apiClient, call } from "../harness/http.ts";
import { articleBody, createArticle } from "../harness/articles.ts";
import { eventually } from "../harness/eventually.ts";
import { stackClient } from "../harness/service-clients.ts";
import { QuotaService } from "../../proto/gen/articles/accounts_billing/v1/quota_pb.ts";
import { DashboardClient, linkTokenFor } from "../harness/dashboard.ts";

let stack: TestStack;
let tenant: Tenant;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack, { monthlyWords: 50_000 });
});

const sum = (list: { words: number }[]) => list.reduce((n, s) => n + s.words, 0);

test("the report's words are the ledger's, by day and hour, by project and by key", async () => {
  const owner = apiClient(stack.baseUrl, tenant.token);
  const second = await createProject(stack, tenant.accountId, "Second");
  const editor = await addMemberWithKey(stack, tenant, "editor");
  const a = await createArticle(owner, articleBody(tenant.projectId, { target_word_count: 300 }));
  const b = await createArticle(apiClient(stack.baseUrl, editor.token), articleBody(second, { target_word_count: 500 }));
  const cancelled = await createArticle(owner, articleBody(second, { target_word_count: 1000, title: "Cancelled at once [[sim:sleep=5000]]" }));
  expect((await owner.post(`/v1/articles/${cancelled.id}/cancel`)).status).toBe(200);
  for (const id of [a.id, b.id]) await eventually(() => owner.get(`/v1/articles/${id}`), (r) => r.body.data?.status === "completed", 30_000, `article ${id} completed`);

  const quota = stackClient(stack, QuotaService, stack.env.ACCOUNTS_BILLING_URL!, "operator");
  const ledger = await eventually(() => quota.getWordUsage({ accountId: BigInt(tenant.accountId) }), (u) => u.reservedWords === 0n, 10_000, "nothing held");
  const res = await owner.get("/v1/usage");
  expect(res.status).toBe(200);
  expect(res.headers.get("ratelimit-limit")).not.toBeNull();
  const u = res.body.data;
  expect(u).toMatchObject({
    account_id: tenant.accountId,
    period: ledger.period,
    monthly_words: 50_000,
    settled_words: Number(ledger.usedWords),
    reserved_words: 0,
    remaining_words: Number(ledger.remainingWords),
  });
  expect(u.settled_words).toBeGreaterThan(0);
  // Every settled word is in today's bucket and this hour's; the cancelled article's nowhere.
  expect(u.days).toHaveLength(1);
  expect(u.days[0].start).toBe(`${new Date().toISOString().slice(0, 10)}T00:00:00.000Z`);
  expect(u.days[0]).toMatchObject({ words: u.settled_words, settled_words: u.settled_words, reserved_words: 0 });
  expect(sum(u.hours)).toBe(u.settled_words);
  const day = u.days[0];
  expect(sum(day.by_project)).toBe(u.settled_words);
  expect(sum(day.by_key)).toBe(u.settled_words);
  expect(day.by_project.map((s: any) => s.project_id).sort()).toEqual([tenant.projectId, second].sort());
  expect(day.by_key.map((s: any) => s.key_id).sort()).toEqual([tenant.keyId, editor.keyId].sort());
  const articleWords = async (id: number) => (await owner.get(`/v1/articles/${id}`)).body.data.actual_word_count;
  expect(day.by_key.find((s: any) => s.key_id === editor.keyId).words).toBe(await articleWords(b.id));
  // Costs are the articles' own, as their settlements carried them.
  const costOf = async (id: number) => (await owner.get(`/v1/articles/${id}`)).body.data.cost as string;
  const [costA, costB] = [await costOf(a.id), await costOf(b.id)];
  expect(Number(costB)).toBeGreaterThan(0);
  expect(day.by_key.find((s: any) => s.key_id === editor.keyId).cost).toBe(costB);
  expect(day.by_key.find((s: any) => s.key_id === tenant.keyId).cost).toBe(costA);
  expect(Number(day.cost)).toBeCloseTo(Number(costA) + Number(costB), 10);
  // The requests made so far show in the articles bucket's windows.
  const articles = u.rate_limits.find((l: any) => l.bucket === "articles");
  expect(articles.windows.map((w: any) => w.window_seconds)).toEqual([60, 3600, 86400]);
  expect(articles.windows[0].used).toBeGreaterThanOrEqual(4);
  expect(articles.windows[0].remaining).toBe(articles.windows[0].limit - articles.windows[0].used);

  // The dashboard shows the same report, for a session on the same account.
  const dashboard = new DashboardClient(stack.baseUrl);
  expect((await dashboard.setPassword(await linkTokenFor(stack, tenant.userId), "correct horse battery")).status).toBe(200);
  const shown = (await dashboard.get("/usage")).body.data;
  expect({ ...shown, rate_limits: [] }).toEqual({ ...u, rate_limits: [] });
});

test("the report needs a key and an active subscription, as /v1 does", async () => {
  expect((await call(stack.baseUrl, "GET", "/v1/usage")).status).toBe(401);
  const unsubscribed = await createTenant(stack, { subscribed: false });
  expect((await call(stack.baseUrl, "GET", "/v1/usage", { token: unsubscribed.token })).status).toBe(402);
});
