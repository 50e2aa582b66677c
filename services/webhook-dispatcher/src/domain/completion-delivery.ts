// One attempt at delivering an article's completion webhook (spec 6), from the article's state to
// what the article records: the attempt in its delivery log, with published on success, or the
// delivery marked failed once no attempt is left. Queue mechanics live in the worker. The reads
// and records of the attempts in flight go to article-store and the database together.
import type { Client } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { AccountsService } from "../../../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import type { ArticleLifecycleService, ArticleStoreService } from "../../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import type { WebhookJob } from "../../../kit/src/queues.ts";
import type { HostResolver } from "../../../kit/src/safe-http.ts";
import type { Db } from "../db/client.ts";
import { completionPayload } from "./completion-payload.ts";
import { batchedArticleReads, batchedDeliveryRecords, type ArticleRead, type DeliveryRecord, type RecordDelivery } from "./article-store-batches.ts";
import { deliverWebhook, type AttemptResult, type DeliveryOptions } from "./deliver-webhook.ts";
import { FrozenMessages, type CompletionMessage } from "./messages.ts";
import type { ProjectNames } from "./project-names.ts";
import { nextStep, type NextStep } from "./retry-schedule.ts";
import { signingSecretOf } from "./signing-secrets.ts";
import { signatureHeaders, webhookMessageId } from "./standard-webhooks.ts";

export interface DeliveryServices {
  articles: Client<typeof ArticleStoreService>;
  lifecycle: Client<typeof ArticleLifecycleService>;
  accounts: Client<typeof AccountsService>;
}

export interface DeliveryPolicy {
  attempts: number;
  backoffMs: readonly number[];
  allowPrivate: boolean;
  timeoutMs: number;
  secretKey: Buffer;
  resolveHost?: HostResolver;
  logger?: DeliveryOptions["logger"];
}

export interface DeliveryContext {
  db: Db;
  services: DeliveryServices;
  policy: DeliveryPolicy;
  /** Project names for payloads; without it each message asks accounts-billing. */
  projectNames?: ProjectNames;
}

export type DeliveryOutcome =
  | { kind: "delivered"; messageId: string; attempt: number }
  | { kind: "not-sent"; reason: string }
  | { kind: "retry"; attempt: number; delayMs: number; error: string }
  | { kind: "given-up"; messageId: string; attempt: number; reason: string };

// Statuses in which an article has a finished version to deliver (published: a later version).
const DELIVERABLE = new Set(["completed", "published"]);

const USER_AGENT = "ArticleGenerationService-Webhooks/1";

/** Attempt number `attempt` (from 1) of the delivery of `job`. Errors of other services propagate. */
export type CompletionDeliveryAttempt = (job: WebhookJob, attempt: number) => Promise<DeliveryOutcome>;

/** What the attempts share: the batches their reads and records join. */
interface SharedCalls {
  articleOf: ArticleRead;
  messages: FrozenMessages;
  record: RecordDelivery;
}

export function completionDeliveries(ctx: DeliveryContext): CompletionDeliveryAttempt {
  const shared: SharedCalls = {
    articleOf: batchedArticleReads(ctx.services.articles),
    messages: new FrozenMessages(ctx.db),
    record: batchedDeliveryRecords(ctx.services.lifecycle),
  };
  return (job, attempt) => attemptCompletionDelivery(ctx, shared, job, attempt);
}

async function attemptCompletionDelivery(ctx: DeliveryContext, shared: SharedCalls, job: WebhookJob, attempt: number): Promise<DeliveryOutcome> {
  const { services, policy, db } = ctx;
  const article = await shared.articleOf(job.externalId);
  if (!article) return { kind: "not-sent", reason: "article not found" };
  // Checked on every attempt: a failed article never fires a webhook (spec 3).
  if (article.status === "failed") return { kind: "not-sent", reason: "the article failed; failed articles are never delivered" };
  if (!DELIVERABLE.has(article.status)) return { kind: "not-sent", reason: `the article is ${article.status}, not completed` };
  if (article.status === "published" && article.publishedVersionId === BigInt(job.versionId)) {
    return { kind: "not-sent", reason: "this version was already delivered" };
  }
  // A delivery ends with its job: a job enqueued again after one gave up (which left the queue then) sends nothing.
  if (article.deliveryFailedAt) return { kind: "not-sent", reason: "its delivery was given up" };
  if (!article.webhookUrl) return { kind: "not-sent", reason: "the article has no webhook_url" };

  const messageId = webhookMessageId(job.externalId, job.versionId);
  // No attempt and no interruption before this one: its job has never run, so has frozen nothing.
  const firstActivation = attempt === 1 && !job.interruptions;
  // An article never changes project, so its signing secret is read while the message is frozen.
  const secretRead = signingSecretOf(db, policy.secretKey, Number(article.projectId));
  secretRead.catch(() => {}); // awaited below, after the message
  const message = await shared.messages.frozen(messageId, async (): Promise<CompletionMessage> => {
    const name = ctx.projectNames ? await ctx.projectNames.nameOf(article.projectId) : await projectName(services, article.projectId);
    const payload = completionPayload(article, { id: article.projectId, name });
    return {
      id: messageId,
      externalId: job.externalId,
      versionId: job.versionId,
      projectId: Number(article.projectId),
      url: article.webhookUrl!,
      body: JSON.stringify(payload),
    };
  }, { neverFrozen: firstActivation });

  const secret = message.projectId === Number(article.projectId) ? await secretRead : await signingSecretOf(db, policy.secretKey, message.projectId);
  const headers = { "user-agent": USER_AGENT, ...(secret ? signatureHeaders(secret, message.id, message.body) : {}) };
  const result = await deliverWebhook(message.url, message.body, headers, policy);
  const step = nextStep(result, attempt, policy);
  await shared.record(deliveryRecord(job, message.id, attempt, result, step));

  switch (step.kind) {
    case "done":
      return { kind: "delivered", messageId, attempt };
    case "retry":
      return { kind: "retry", attempt, delayMs: step.delayMs, error: result.error ?? "delivery failed" };
    case "give-up":
      return { kind: "given-up", messageId, attempt, reason: step.reason };
  }
}

export async function projectName(services: DeliveryServices, projectId: bigint): Promise<string> {
  const { project } = await services.accounts.getProject({ projectId });
  return project?.name ?? "";
}

/** The attempt for the delivery log, and the delivery's end when it ended: published or given up. */
function deliveryRecord(job: WebhookJob, deliveryId: string, attempt: number, result: AttemptResult, step: NextStep): DeliveryRecord {
  return {
    externalId: job.externalId,
    ending:
      step.kind === "done" ? { case: "published", value: true }
      : step.kind === "give-up" ? { case: "deliveryFailureReason", value: step.reason }
      : undefined,
    attempt: {
      deliveryId,
      attempt,
      attemptedAt: timestampFromDate(result.attemptedAt),
      statusCode: result.statusCode,
      error: result.error,
      durationMs: result.durationMs,
      succeeded: result.succeeded,
      versionId: BigInt(job.versionId),
    },
  };
}
