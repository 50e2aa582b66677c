// The completion webhook end to end (spec 6): an article finishes, the dispatcher POSTs it to a
// real local receiver, retries what fails, logs every attempt on the article, and publishes it;
// once, even when its job is enqueued again after the first one left the queue. The project also
// has webhook endpoints, which change nothing of that; and a failed article, which its
// webhook_url never hears of, reaches the endpoint subscribed to article.failed alone.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import IORedis from "ioredis";
import { eventually } from "../harness/eventually.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { startReceiver, type Hook, type Receiver } from "../harness/webhook-receiver.ts";
import { addStep, createQuickArticle, deliveryFailure, deliveryLog, publicArticle, webhookTenant, type WebhookTenant } from "./webhooks-fixtures.ts";
import { openQueue, type WebhookJob } from "../../services/kit/src/queues.ts";

let stack: TestStack;
let redis: IORedis;
let tenant: WebhookTenant;
let receiver: Receiver;
// Generation retries a failing model for about 30 s before failing the article, so the
// failed-article case starts first and is checked last, while the other cases run.
let failing: { hook: Hook; article: any; endpoints: { failed: Hook; others: Hook } };

beforeAll(async () => {
  stack = await useStack();
  redis = new IORedis(stack.env.REDIS_URL ?? "redis://127.0.0.1:6379", { maxRetriesPerRequest: null });
  tenant = await webhookTenant(stack);
  receiver = startReceiver();
  await addStep(tenant.api, tenant.projectId, "webhook_failing", "This step cannot succeed. [[sim:fail]]");
  const hook = receiver.hook();
  // Two webhook endpoints of the project: one subscribed to article.failed, one to the other article events.
  const endpoints = { failed: receiver.hook(), others: receiver.hook() };
  for (const [endpoint, events] of [[endpoints.failed, ["article.failed"]], [endpoints.others, ["article.completed", "article.published"]]] as const) {
    const res = await tenant.api.post(`/v1/projects/${tenant.projectId}/webhook-endpoints`, { url: endpoint.url, events });
    if (res.status !== 201) throw new Error(`adding a webhook endpoint: ${res.status} ${JSON.stringify(res.body)}`);
  }
  failing = { hook, endpoints, article: await createQuickArticle(tenant, { webhook_url: hook.url, article_type: "webhook_failing" }) };
});

afterAll(() => {
  receiver?.stop();
  redis?.disconnect();
});

const status = (code: number) => () => new Response(code >= 300 && code < 400 ? null : "answer", { status: code });

describe("completion webhook", () => {
  test("success on the first try: the full payload arrives once and the article is published", async () => {
    const hook = receiver.hook();
    const created = await createQuickArticle(tenant, { webhook_url: hook.url, target_keyword: "webhook testing", keywords: "delivery, retries", country_targeting: "GB" });
    const [request] = await hook.waitForRequests(1);

    expect(request!.method).toBe("POST");
    expect(request!.headers["content-type"]).toBe("application/json");
    // Unsigned by default (spec 5.8): no signature header of any kind.
    expect(Object.keys(request!.headers).filter((h) => h.startsWith("webhook-"))).toEqual([]);

    const payload = request!.json;
    expect(Object.keys(payload).sort()).toEqual(["content", "data", "seo", "success"]);
    expect(payload.success).toBe(true);
    expect(payload.data).toMatchObject({
      id: created.id,
      external_id: created.external_id,
      status: "completed",
      title: "Webhook delivery check",
      article_type: "webhook_quick",
      keywords: ["delivery", "retries"],
      webhook_url: hook.url,
      project: { id: tenant.projectId },
    });
    expect(payload.data.content.length).toBeGreaterThan(0);
    expect(payload.data.current_version_id).toEqual(expect.any(Number));
    expect(payload.content.format).toBe("markdown");
    expect(payload.content.markdown).toBe(payload.data.content);
    expect(payload.content.html).toContain("<p>");
    expect(payload.content.html).not.toContain("<script");
    expect(payload.content.meta_title).toEqual(expect.any(String));
    expect(payload.content.meta_description).toEqual(expect.any(String));
    expect(payload.seo).toEqual({
      target_keyword: "webhook testing",
      keywords: ["delivery", "retries"],
      language: "en",
      country_targeting: "GB",
      word_count: payload.data.actual_word_count,
      ai_detection_score: payload.data.ai_detection_score,
    });
    expect(payload.seo.word_count).toBeGreaterThan(0);

    await eventually(() => publicArticle(tenant, created.id), (a) => a.status === "published", 10_000, "status published");
    const article = await publicArticle(tenant, created.external_id);
    expect(article.published_version_id).toBe(payload.data.current_version_id);

    const log = await deliveryLog(stack, created.external_id);
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ attempt: 1, statusCode: 200, succeeded: true, deliveryId: `msg_${created.external_id}_${payload.data.current_version_id}` });
    expect(log[0]!.error).toBeUndefined();
    expect(log[0]!.durationMs).toBeGreaterThanOrEqual(0);
    expect(log[0]!.attemptedAt).toBeDefined();

    await Bun.sleep(500);
    expect(hook.requests).toHaveLength(1);
  });

  test("failure then success: retried after the backoff with the very same article", async () => {
    const hook = receiver.hook((n) => (n === 1 ? new Response("busy", { status: 500 }) : new Response(null, { status: 204 })));
    const created = await createQuickArticle(tenant, { webhook_url: hook.url });
    const [first, second] = await hook.waitForRequests(2);

    expect(second!.at - first!.at).toBeGreaterThanOrEqual(250); // WEBHOOK_BACKOFF_MS starts at 300
    expect(second!.body).toBe(first!.body);
    expect(first!.json.data.external_id).toBe(created.external_id);
    expect(second!.json.data.external_id).toBe(created.external_id);

    await eventually(() => publicArticle(tenant, created.id), (a) => a.status === "published", 10_000, "status published");
    const log = await deliveryLog(stack, created.external_id);
    expect(log.map((a) => [a.attempt, a.statusCode, a.succeeded])).toEqual([
      [1, 500, false],
      [2, 204, true],
    ]);
    expect(log[0]!.error).toContain("500");
    expect(log[0]!.deliveryId).toBe(log[1]!.deliveryId);
  });

  test("every attempt failing: three attempts logged, marked failed, status stays completed", async () => {
    const hook = receiver.hook(status(503));
    const created = await createQuickArticle(tenant, { webhook_url: hook.url });
    const requests = await hook.waitForRequests(3);
    const reason = await deliveryFailure(stack, created.external_id);

    expect(reason).toContain("all 3 attempts failed");
    expect(reason).toContain("503");
    expect(new Set(requests.map((r) => r.body)).size).toBe(1);
    expect(new Set(requests.map((r) => r.json.data.external_id))).toEqual(new Set([created.external_id]));
    // Waits of 300 then 600 ms between the attempts.
    expect(requests[1]!.at - requests[0]!.at).toBeGreaterThanOrEqual(250);
    expect(requests[2]!.at - requests[1]!.at).toBeGreaterThanOrEqual(550);

    const log = await deliveryLog(stack, created.external_id);
    expect(log.map((a) => [a.attempt, a.statusCode, a.succeeded])).toEqual([
      [1, 503, false],
      [2, 503, false],
      [3, 503, false],
    ]);
    const article = await publicArticle(tenant, created.id);
    expect(article.status).toBe("completed");
    expect(article.published_version_id).toBeNull();

    await Bun.sleep(800);
    expect(hook.requests).toHaveLength(3);
  });

  test("a webhook job enqueued again after the first left the queue sends nothing: not after a delivery, nor after one given up", async () => {
    // As a run repeating its hand-offs would enqueue it (its job id is free again once the first job finished).
    const enqueueAgain = async (article: any) => {
      const queue = openQueue<WebhookJob>("webhooks", redis, stack.redisPrefix);
      await queue.add("deliver", { externalId: article.external_id, versionId: Number(article.current_version_id) }, { jobId: article.external_id });
      await eventually(() => queue.getJob(article.external_id), (job) => job === undefined, 10_000, "the job to run and leave the queue");
      await queue.close();
    };
    const delivered = receiver.hook();
    const published = await createQuickArticle(tenant, { webhook_url: delivered.url });
    await delivered.waitForRequests(1);
    const done = await eventually(() => publicArticle(tenant, published.id), (a) => a.status === "published", 10_000, "status published");
    const refused = receiver.hook(status(503));
    const givenUp = await createQuickArticle(tenant, { webhook_url: refused.url });
    await refused.waitForRequests(3);
    await deliveryFailure(stack, givenUp.external_id);

    await enqueueAgain(done);
    await enqueueAgain(await publicArticle(tenant, givenUp.id));
    await Bun.sleep(500);
    expect(delivered.requests).toHaveLength(1);
    expect(refused.requests).toHaveLength(3);
    expect(await deliveryLog(stack, published.external_id)).toHaveLength(1);
    expect(await deliveryLog(stack, givenUp.external_id)).toHaveLength(3);
  });

  test("a redirect is not followed and counts as a failed attempt", async () => {
    const target = `${receiver.origin}/redirect-target`;
    const hook = receiver.hook(() => new Response(null, { status: 302, headers: { location: target } }));
    const strayBefore = receiver.stray.length;
    const created = await createQuickArticle(tenant, { webhook_url: hook.url });
    await hook.waitForRequests(3);
    const reason = await deliveryFailure(stack, created.external_id);

    expect(reason).toContain("302");
    expect(receiver.stray.length).toBe(strayBefore);
    const log = await deliveryLog(stack, created.external_id);
    expect(log).toHaveLength(3);
    for (const attempt of log) {
      expect(attempt.statusCode).toBe(302);
      expect(attempt.succeeded).toBe(false);
      expect(attempt.error).toContain("redirects are not followed");
    }
    expect((await publicArticle(tenant, created.id)).status).toBe("completed");
  });

  test("a failed article sends nothing to its webhook_url; only the endpoint subscribed to article.failed hears of it", async () => {
    const { hook, article: created, endpoints } = failing;
    await eventually(() => publicArticle(tenant, created.id), (a) => a.status === "failed", 55_000, "status failed");
    const [failed] = await endpoints.failed.waitForRequests(1, 10_000);
    expect(failed!.json).toMatchObject({ type: "article.failed", data: { external_id: created.external_id, status: "failed" } });

    await Bun.sleep(1000);
    expect(hook.requests).toHaveLength(0);
    expect(endpoints.failed.requests).toHaveLength(1);
    expect(endpoints.others.requests.filter((r) => r.json?.data?.external_id === created.external_id)).toEqual([]);
    expect(await deliveryLog(stack, created.external_id)).toEqual([]);
    expect((await publicArticle(tenant, created.id)).status).toBe("failed");
  }, 60_000);
});
