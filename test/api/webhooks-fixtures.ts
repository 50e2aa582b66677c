// Shared by the webhook tests: a tenant with a one-step custom workflow that writes a short
// article fast, and the article-store reads (delivery log, delivery failure) that the public API
// does not show.
import { articleBody, createArticle } from "../harness/articles.ts";
import { eventually } from "../harness/eventually.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { lifecycleClient, storeClient } from "../harness/service-clients.ts";
import type { TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";

const QUICK_TYPE = "webhook_quick";

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

/** An article of the tenant's quick one-step workflow (any field overridable). */
export function createQuickArticle(tenant: WebhookTenant, fields: Record<string, unknown>): Promise<any> {
  return createArticle(
    tenant.api,
    articleBody(tenant.projectId, { title: "Webhook delivery check", article_type: QUICK_TYPE, target_word_count: 100, point_of_view: "third_person", ...fields }),
  );
}

/** The article through the public API. */
export async function publicArticle(tenant: WebhookTenant, id: number | string): Promise<any> {
  const res = await tenant.api.get(`/v1/articles/${id}`);
  if (res.status !== 200) throw new Error(`reading article ${id}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.data;
}

/** The delivery log of an article, oldest attempt first. */
export async function deliveryLog(stack: TestStack, externalId: string) {
  return (await lifecycleClient(stack, "operator").listDeliveryAttempts({ externalId })).attempts;
}

/** Waits until every attempt of the article's delivery failed and the article says so. */
export async function deliveryFailure(stack: TestStack, externalId: string, timeoutMs = 30_000): Promise<string> {
  const articles = storeClient(stack);
  const { article } = await eventually(() => articles.getArticle({ identifier: externalId }), ({ article }) => article?.deliveryFailedAt !== undefined, timeoutMs, `the delivery of ${externalId} to be marked failed`);
  return article!.deliveryFailureReason ?? "";
}
