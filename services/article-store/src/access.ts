// Who may call article-store (access-policy.ts). The gateway creates, reads and cancels for
// clients, and replays ended articles' archived event logs; the generation runner records what generation did; the webhook dispatcher records
// deliveries and publications (and reads the articles it delivers and publishes); the operator
// creates brand voices and image presets and inspects records.
import { ArticleLifecycleService, ArticleStoreService } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { ArticleRetryService } from "../../../proto/gen/articles/article_store/v1/retry_pb.ts";
import { ArticleErasureService } from "../../../proto/gen/articles/article_store/v1/erasure_pb.ts";
import { ArticleRevisionService } from "../../../proto/gen/articles/article_store/v1/revisions_pb.ts";
import { ArticleVersionService } from "../../../proto/gen/articles/article_store/v1/versions_pb.ts";
import { allow, CALLERS } from "../../kit/src/access-policy.ts";

const { gateway, generationRunner, webhookDispatcher, operator } = CALLERS;

export const articleStoreAccess = [
  allow(ArticleStoreService, {
    createArticle: [gateway],
    getArticle: [gateway, generationRunner, webhookDispatcher, operator],
    batchGetArticlesByExternalId: [generationRunner, webhookDispatcher],
    listArticles: [gateway],
    batchGetArticles: [gateway],
    findIdempotentArticle: [gateway],
    claimIdempotencyKey: [gateway],
    createBrandVoice: [operator],
    getBrandVoice: [gateway, generationRunner, operator],
    createImagePreset: [operator],
    getImagePreset: [gateway, generationRunner, operator],
    listArticleEvents: [gateway],
  }),
  allow(ArticleLifecycleService, {
    recordProgress: [generationRunner],
    completeGeneration: [generationRunner],
    addVersion: [generationRunner],
    recordOriginality: [generationRunner],
    failArticle: [generationRunner],
    // The operator cancels a running article it erases on request.
    cancelArticle: [gateway, operator],
    recordResearchSources: [generationRunner],
    listResearchSources: [operator],
    recordDeliveryAttempt: [webhookDispatcher],
    listDeliveryAttempts: [operator],
    markPublished: [webhookDispatcher],
    markDeliveryFailed: [webhookDispatcher],
    recordDeliveries: [webhookDispatcher],
    recordPublication: [webhookDispatcher],
  }),
  // Retries come through the gateway (POST /v1/articles/{id}/retry).
  allow(ArticleRetryService, {
    retryArticle: [gateway],
  }),
  // Erasures: DELETE /v1/articles/{id} through the gateway, or the operator on request (`article erase`).
  allow(ArticleErasureService, {
    eraseArticle: [gateway, operator],
    findErasure: [gateway, operator],
  }),
  // A client's edits and restores come through the gateway; operators read histories.
  allow(ArticleVersionService, {
    listVersions: [gateway, operator],
    // The runner reads an edited version to score it.
    getVersion: [gateway, generationRunner, operator],
    restoreVersion: [gateway],
    editArticle: [gateway],
  }),
  // Section revisions: asked for through the gateway, run by the generation runner.
  allow(ArticleRevisionService, {
    createRevision: [gateway],
    listRevisions: [gateway, operator],
    pendingRevision: [generationRunner],
    completeRevision: [generationRunner],
    failRevision: [generationRunner],
    cancelRevision: [gateway],
  }),
];
