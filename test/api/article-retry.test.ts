// POST /v1/articles/{id}/retry and gRPC's RetryArticle: an article of a five-step workflow that
// failed at step 3 (cancelled while step 3 ran) is queued again with the same ids, resumes on its
// pinned workflow from step 3 (steps 1 and 2 are neither called nor billed again), completes with
// its webhook, and bills exactly its final words once; its failure is recorded in its log. Only a
// failed article can be retried, and only with update access.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as grpc from "@grpc/grpc-js";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, operatorClient, type Tenant } from "../harness/tenants.ts";
import { createArticle } from "../harness/articles.ts";
import { closeClients, publicClients, type PublicClients } from "../harness/public-grpc.ts";
import { grpcOutcome } from "./reach-support.ts";
import { articleBody, callsStartingWith, createWorkflow, finished, marker, waitForArticle, webhookReceiver, wordUsage } from "./generation-support.ts";
import { openEvents } from "./article-events-support.ts";
import { eventually } from "../harness/eventually.ts";

let stack: TestStack;
let tenant: Tenant;
let api: ApiClient;
let clients: PublicClients;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
  clients = publicClients(Number(new URL(stack.publicGrpcUrl).port));
});

afterAll(() => closeClients(clients));

const metadataOf = (token: string) => {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${token}`);
  return metadata;
};

const settled = (accountId: number) => eventually(async () => wordUsage(stack, accountId), (u) => Number(u.reservedWords) === 0, 15_000, "nothing reserved");

describe("retrying a failed article", () => {
  test("failed at step 3 of 5: resumes at step 3, steps 1-2 not called or billed again, the final words billed once, the webhook sent", async () => {
    const hook = webhookReceiver();
    try {
      const m = marker("retry");
      const type = marker("retried");
      await createWorkflow(api, tenant.projectId, type, [
        { user: `[[sim:echo]]alpha one ${m}` },
        { user: `[[sim:echo]]bravo two ${m}` },
        { step_name: "Third", user: `[[sim:sleep=1500]][[sim:echo]]charlie three ${m}` },
        { user: `[[sim:echo]]delta four ${m}` },
        { user: `[[sim:echo]]# Echo five\n\nThe final text of ${m} stands here.` },
      ]);
      const before = await wordUsage(stack, tenant.accountId);
      const created = await createArticle(api, articleBody(tenant.projectId, { article_type: type, webhook_url: hook.url }));
      const stream = await openEvents(stack.baseUrl, tenant.token, created.external_id, { lastEventId: "0-0" });
      await stream.until((e) => e.event === "step_started" && e.data.step === 3);
      expect((await api.post(`/v1/articles/${created.external_id}/cancel`)).status).toBe(200);
      await stream.done;
      const failedEvent = stream.events.at(-1)!;
      expect(failedEvent.event).toBe("failed");
      await settled(tenant.accountId);
      // Steps 1 and 2 finished (step 3 is listed as started, unfinished).
      const stepsBefore = (await api.get(`/v1/articles/${created.external_id}/steps`)).body.data.steps.filter((s: any) => s.step_number <= 2);
      expect(stepsBefore.map((s: any) => s.step_number)).toEqual([1, 2]);

      // Only update access retries.
      const reader = await operatorClient(stack).createApiKey({ accountId: BigInt(tenant.accountId), userId: BigInt(tenant.userId), scope: { accountOnly: false, projectIds: [], readOnly: true } });
      expect((await api.withToken(reader.token).post(`/v1/articles/${created.external_id}/retry`)).status).toBe(403);

      const retried = await api.post(`/v1/articles/${created.external_id}/retry`);
      expect(retried.status).toBe(200);
      expect(retried.body.message).toContain('"Third"');
      expect(retried.body.data).toMatchObject({ id: created.id, external_id: created.external_id, status: "queued", failure_reason: null });

      const done = await waitForArticle(api, created.external_id, (a) => (a.status === "published" && finished(a)) || a.status === "failed");
      expect(done.status).toBe("published");
      expect(done.content).toContain(`The final text of ${m} stands here.`);

      // Steps 1 and 2 ran once; step 3 twice (the cancelled call, then the retry's); 4 and 5 once.
      expect(await callsStartingWith(stack, m, "alpha one")).toBe(1);
      expect(await callsStartingWith(stack, m, "bravo two")).toBe(1);
      expect(await callsStartingWith(stack, m, "charlie three")).toBe(2);
      expect(await callsStartingWith(stack, m, "delta four")).toBe(1);
      const stepsAfter = (await api.get(`/v1/articles/${created.external_id}/steps`)).body.data.steps;
      expect(stepsAfter.map((s: any) => s.step_number)).toEqual([1, 2, 3, 4, 5]);
      expect(stepsAfter.slice(0, 2)).toEqual(stepsBefore);

      // The ledger bills the article's final words once: the failed run's settlement was replaced.
      const after = await settled(tenant.accountId);
      expect(Number(after.usedWords) - Number(before.usedWords)).toBe(done.actual_word_count);
      // The webhook went out on completion, once.
      await eventually(async () => hook.received.length, (n) => n === 1, 10_000, "one webhook");
      expect(hook.received[0]!.body.data.external_id).toBe(created.external_id);

      // The failure stays in the log: after the failed event, the retry names it.
      const later = await openEvents(stack.baseUrl, tenant.token, created.external_id, { lastEventId: failedEvent.id });
      const retriedEvent = await later.until((e) => e.event === "retried");
      later.close();
      expect(retriedEvent.data).toMatchObject({ attempt: 1, previous_reason: "Cancelled by the client.", previous_step: "Third", status: "queued" });

      // A finished article cannot be retried: 409 over HTTP, ABORTED over gRPC.
      const again = await api.post(`/v1/articles/${created.external_id}/retry`);
      expect(again.status).toBe(409);
      expect(again.body.status).toBe("published");
      expect((await grpcOutcome(clients, "ArticleService", "RetryArticle", { id: created.external_id }, metadataOf(tenant.token))).code).toBe("ABORTED");
    } finally {
      hook.stop();
    }
  }, 90_000);

  test("over gRPC: a cancelled queued article is retried and completes", async () => {
    const created = await createArticle(api, articleBody(tenant.projectId, { title: "Cancelled at once, then retried" }));
    expect((await api.post(`/v1/articles/${created.external_id}/cancel`)).status).toBe(200);
    await settled(tenant.accountId);
    const retried = await grpcOutcome(clients, "ArticleService", "RetryArticle", { id: created.external_id }, metadataOf(tenant.token));
    expect(retried.code).toBe("OK");
    expect(retried.reply.article).toMatchObject({ external_id: created.external_id, status: "queued" });
    const done = await waitForArticle(api, created.external_id, (a) => finished(a));
    expect(done.status).toBe("completed");
  }, 60_000);

  test("a run that failed on its own at step 3: the retry calls steps 1-2 no more, records the failure, and gives the words back when step 3 fails again", async () => {
    const m = marker("failing");
    const type = marker("fails-at-3");
    await createWorkflow(api, tenant.projectId, type, [
      { user: `[[sim:echo]]alpha one ${m}` },
      { user: `[[sim:echo]]bravo two ${m}` },
      { step_name: "Broken", user: `[[sim:fail]]charlie three ${m}` },
      { user: `[[sim:echo]]delta four ${m}` },
      { user: `[[sim:echo]]echo five ${m}` },
    ]);
    const created = await createArticle(api, articleBody(tenant.projectId, { article_type: type }));
    const failed = await waitForArticle(api, created.external_id, (a) => a.status === "failed");
    expect(failed.failure_reason).not.toBe("Cancelled by the client.");
    await settled(tenant.accountId);
    const callsOfStep3 = await callsStartingWith(stack, m, "charlie three");
    expect(callsOfStep3).toBeGreaterThan(0);

    const retried = await api.post(`/v1/articles/${created.external_id}/retry`);
    expect(retried.status).toBe(200);
    expect(retried.body.message).toContain('"Broken"');
    const again = await waitForArticle(api, created.external_id, (a) => a.status === "failed");
    expect(again.failure_reason).toBe(failed.failure_reason);
    // Steps 1 and 2 were not called again; step 3 was.
    expect(await callsStartingWith(stack, m, "alpha one")).toBe(1);
    expect(await callsStartingWith(stack, m, "bravo two")).toBe(1);
    expect(await callsStartingWith(stack, m, "charlie three")).toBeGreaterThan(callsOfStep3);
    expect(await callsStartingWith(stack, m, "delta four")).toBe(0);
    // The hold was given back again.
    await settled(tenant.accountId);
  }, 60_000);
});
