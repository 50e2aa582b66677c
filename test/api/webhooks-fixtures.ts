// Shared by the webhook tests: a real local receiver whose answers each test scripts, a tenant
// with a one-step custom workflow that writes a short article fast, and the article-store reads
// (delivery log, delivery failure) that the public API does not show.
import { randomBytes } from "node:crypto";
import { ArticleLifecycleService, ArticleStoreService } from "../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { WebhookSigningService } from "../../proto/gen/articles/webhook_dispatcher/v1/signing_pb.ts";
import { serviceClient } from "../../services/kit/src/clients.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import type { TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";

export interface ReceivedWebhook {
  at: number;
  method: string;
  headers: Record<string, string>;
  body: string;
  json: any;
}

/** Answers the n-th request (from 1) to a hook. */
export type HookScript = (n: number) => Response | Promise<Response>;

export interface Hook {
  url: string;
  requests: ReceivedWebhook[];
  /** Resolves once `count` requests arrived; fails after timeoutMs. */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedWebhook[]>;
}

export interface Receiver {
  origin: string;
  hook(script?: HookScript): Hook;
  /** Requests to paths no hook owns (e.g. a redirect target). */
  stray: ReceivedWebhook[];
  stop(): void;
}

export function startReceiver(): Receiver {
  const hooks = new Map<string, { script: HookScript; requests: ReceivedWebhook[] }>();
  const stray: ReceivedWebhook[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      const text = await req.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      const received = { at: Date.now(), method: req.method, headers: Object.fromEntries(req.headers), body: text, json };
      const hook = hooks.get(new URL(req.url).pathname);
      if (!hook) {
        stray.push(received);
        return new Response("no such hook", { status: 404 });
      }
      hook.requests.push(received);
      return hook.script(hook.requests.length);
    },
  });
  const origin = `http://127.0.0.1:${server.port}`;
  return {
    origin,
    stray,
    hook(script = () => new Response("ok")) {
      const path = `/hooks/${randomBytes(6).toString("hex")}`;
      const entry = { script, requests: [] as ReceivedWebhook[] };
      hooks.set(path, entry);
      return {
        url: origin + path,
        requests: entry.requests,
        waitForRequests: async (count, timeoutMs = 30_000) => {
          await eventually(async () => entry.requests.length >= count, timeoutMs, `${count} webhook request(s) at ${path} (got ${entry.requests.length})`);
          return entry.requests;
        },
      };
    },
    stop: () => server.stop(true),
  };
}

/** Polls until `check` holds; fails naming what was awaited. */
export async function eventually(check: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return;
    await Bun.sleep(50);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

export const QUICK_TYPE = "webhook_quick";

export interface WebhookTenant extends Tenant {
  api: ApiClient;
}

/** A tenant whose project has a one-step custom workflow writing about 50 words. */
export async function webhookTenant(stack: TestStack): Promise<WebhookTenant> {
  const tenant = await createTenant(stack);
  const api = apiClient(stack.baseUrl, tenant.token);
  await addStep(api, tenant.projectId, QUICK_TYPE, "Write a short article titled {title}. [[sim:words=50]]");
  return { ...tenant, api };
}

/** A one-step custom workflow whose user prompt is `user`. */
export async function addStep(api: ApiClient, projectId: number, articleType: string, user: string): Promise<void> {
  const res = await api.post(`/v1/projects/${projectId}/workflows`, {
    article_type: articleType,
    step_number: 1,
    step_name: "Write",
    system: "You write short articles.",
    user,
    output_format: "markdown",
  });
  if (res.status !== 201) throw new Error(`creating workflow ${articleType}: ${res.status} ${JSON.stringify(res.body)}`);
}

export async function createArticle(tenant: WebhookTenant, fields: Record<string, unknown>): Promise<any> {
  const res = await tenant.api.post("/v1/articles", {
    project_id: tenant.projectId,
    title: "Webhook delivery check",
    article_type: QUICK_TYPE,
    target_word_count: 100,
    tone: "friendly",
    point_of_view: "third_person",
    language: "en",
    ...fields,
  });
  if (res.status !== 201) throw new Error(`creating article: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** The article through the public API. */
export async function publicArticle(tenant: WebhookTenant, id: number | string): Promise<any> {
  const res = await tenant.api.get(`/v1/articles/${id}`);
  if (res.status !== 200) throw new Error(`reading article ${id}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

export function storeClients(stack: TestStack) {
  const via = { baseUrl: stack.env.ARTICLE_STORE_URL!, serviceToken: stack.env.SERVICE_TOKEN! };
  return {
    articles: serviceClient(ArticleStoreService, via),
    lifecycle: serviceClient(ArticleLifecycleService, via),
  };
}

export function signingClient(stack: TestStack) {
  return serviceClient(WebhookSigningService, { baseUrl: stack.env.WEBHOOK_DISPATCHER_URL!, serviceToken: stack.env.SERVICE_TOKEN! });
}

/** The delivery log of an article, oldest attempt first. */
export async function deliveryLog(stack: TestStack, externalId: string) {
  return (await storeClients(stack).lifecycle.listDeliveryAttempts({ externalId })).attempts;
}

/** Waits until every attempt of the article's delivery failed and the article says so. */
export async function deliveryFailure(stack: TestStack, externalId: string, timeoutMs = 30_000) {
  const { articles } = storeClients(stack);
  let reason: string | undefined;
  await eventually(
    async () => {
      const { article } = await articles.getArticle({ identifier: externalId });
      reason = article?.deliveryFailedAt ? (article.deliveryFailureReason ?? "") : undefined;
      return reason !== undefined;
    },
    timeoutMs,
    `the delivery of ${externalId} to be marked failed`,
  );
  return reason!;
}
