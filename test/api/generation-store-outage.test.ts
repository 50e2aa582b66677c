// A service the runner needs is down while an article generates, for longer than the job's
// attempts would last. Its unavailability spends no attempt: the article waits for it and, once
// it is back, completes; a completed article is never left without its settlement and webhook.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { createArticle } from "../harness/articles.ts";
import { eventually } from "../harness/eventually.ts";
import { storeClient } from "../harness/service-clients.ts";
import { generationQueue } from "./articles-fixtures.ts";
import { articleBody, createWorkflow, marker, runOf, waitForArticle, webhookReceiver, wordUsage } from "./generation-support.ts";

let stack: TestStack;
let api: ApiClient;
let tenant: Tenant;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
});

afterAll(async () => {
  for (const name of ["articleStore", "accountsBilling"] as const) if (stack.processes.get(name)?.exitCode !== null) await stack.start(name);
});

/** Waits until the article's generation job has been activated `times` times, each cut short by the outage; its counts then. */
async function outageActivations(externalId: string, times: number): Promise<{ attemptsStarted: number; attemptsMade: number }> {
  const { queue, close } = generationQueue(stack);
  try {
    return await eventually(
      async () => {
        const job = await queue.getJob(externalId);
        return { attemptsStarted: job?.attemptsStarted ?? 0, attemptsMade: job?.attemptsMade ?? 0 };
      },
      (job) => job.attemptsStarted >= times,
      30_000,
      `the job taken up ${times} times during the outage`,
    );
  } finally {
    await close();
  }
}

test("an article that cannot reach article-store for longer than its attempts would last completes once it is back", async () => {
  const m = marker("outage");
  const type = marker("outage");
  await createWorkflow(api, tenant.projectId, type, [
    { step_name: "Slow", user: `[[sim:sleep=1500]][[sim:echo]]one ${m}` },
    { step_name: "Next", user: `[[sim:echo]]two ${m} after {step_1_output}` },
  ]);
  const created = await createArticle(api, articleBody(tenant.projectId, { article_type: type }));
  await waitForArticle(api, created.external_id, (a) => a.current_step === "Slow", 10_000);

  await stack.kill("articleStore");
  try {
    // The run meets the outage once its step ends and it next needs article-store: it records why
    // it stopped (the runner's own record, read from the runner while article-store is away).
    const met = await eventually(() => runOf(stack, created.external_id), (run) => run?.lastError !== undefined, 15_000, "the run to meet article-store's outage");
    expect(met!.lastError).toMatch(/unavailable/i);
    expect(met!.finishedAt).toBeUndefined();
    // The outage lasts past what the job's attempts would: activations cut short by it are not
    // counted. Waited for until the job has been taken up again and again (1 s, 2 s, 4 s apart).
    const job = await outageActivations(created.external_id, 4);
    expect(job.attemptsMade).toBe(0);
    expect((await runOf(stack, created.external_id))!.finishedAt).toBeUndefined();
  } finally {
    await stack.start("articleStore");
  }

  const ended = await waitForArticle(api, created.external_id, (a) => ["completed", "published", "failed"].includes(a.status), 45_000);
  expect(ended.status).toBe("completed");
  expect(ended.content).toBe(`two ${m} after one ${m}`);
  // Its words are settled (just after it reads completed), none left reserved.
  await eventually(() => wordUsage(stack, tenant.accountId), (usage) => Number(usage.reservedWords) === 0, 10_000, "the article's words settled");
}, 60_000);

test("a completed article whose last attempt cannot settle its words still settles them and sends its webhook", async () => {
  const own = await createTenant(stack);
  const ownApi = apiClient(stack.baseUrl, own.token);
  const hook = webhookReceiver();
  try {
    const m = marker("settle");
    const type = marker("settle");
    await createWorkflow(ownApi, own.projectId, type, [{ step_name: "Slow", user: `[[sim:sleep=1500]][[sim:echo]]only ${m}` }]);
    const created = await createArticle(ownApi, articleBody(own.projectId, { article_type: type, webhook_url: hook.url }));
    await waitForArticle(ownApi, created.external_id, (a) => a.current_step === "Slow", 10_000);

    await stack.kill("accountsBilling");
    let restartedAt: number;
    try {
      // The article completes (article-store records it), then settling its words meets the
      // outage, and the run records why it stopped. Both read without accounts-billing.
      const met = await eventually(
        async () => ({ run: await runOf(stack, created.external_id), article: (await storeClient(stack).getArticle({ identifier: created.external_id })).article }),
        ({ run, article }) => article?.status === "completed" && run?.lastError !== undefined,
        15_000,
        "the article to complete and its settlement to meet accounts-billing's outage",
      );
      expect(met.run!.lastError).toMatch(/unavailable/i);
      // The outage lasts past what the job's attempts would: activations cut short by it are not
      // counted. Meanwhile no webhook goes out: it follows the settlement.
      const job = await outageActivations(created.external_id, 4);
      expect(job.attemptsMade).toBe(0);
      expect(hook.received).toEqual([]);
      expect(await wordUsage(stack, own.accountId).then(() => "answered", () => "away")).toBe("away");
    } finally {
      restartedAt = Date.now();
      await stack.start("accountsBilling");
    }

    await eventually(async () => hook.received.length, (n) => n > 0, 30_000, "the completion webhook");
    expect(hook.received[0]!.at).toBeGreaterThanOrEqual(restartedAt);
    expect(hook.received.map((r) => r.body.data.external_id)).toEqual([created.external_id]);
    const done = await waitForArticle(ownApi, created.external_id, (a) => a.status === "published", 10_000);
    expect(done.content).toBe(`only ${m}`);
    const usage = await wordUsage(stack, own.accountId);
    expect(Number(usage.reservedWords)).toBe(0);
    expect(Number(usage.usedWords)).toBe(done.actual_word_count);
  } finally {
    hook.stop();
  }
}, 60_000);
