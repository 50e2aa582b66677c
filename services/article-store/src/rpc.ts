// gRPC handlers of article-store: thin translations between proto messages and the domain.
import type { OutboxRelay } from "./outbox-relay.ts";
import { Code, ConnectError, type Client, type ConnectRouter } from "@connectrpc/connect";
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  ArticleLifecycleService,
  ArticleSchema,
  ArticleSourceSchema,
  type ArticleSource as SourceMessage,
  ArticleStoreService,
  DeliveryAttemptSchema,
  GenerationSettingsSchema,
  type DeliveryAttempt as AttemptMessage,
  ResearchSourceSchema,
  type Article,
  type GenerationSettings as SettingsMessage,
  type ListPosition,
} from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import type { AccountsService } from "../../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import { codeToString } from "@connectrpc/connect/protocol-connect";
import { invalidFields, toConnectError } from "../../kit/src/errors.ts";
import type { Db } from "./db/client.ts";
import type { ArticleSource as ArticleSourceRecord, GenerationSettings } from "./db/schema.ts";
import * as store from "./domain/articles.ts";
import type { InitialStatus } from "../../kit/src/rules/article-statuses.ts";
import * as listing from "./domain/article-list.ts";
import * as idempotency from "./domain/idempotency.ts";
import * as lifecycle from "./domain/lifecycle.ts";
import * as research from "./domain/research-sources.ts";
import * as delivery from "./domain/delivery-attempts.ts";
import * as deliveries from "./domain/delivery-records.ts";
import { markedByDeliveries } from "./changed-articles.ts";
import * as styles from "./domain/project-styles.ts";
import { recordPublication } from "./domain/publications.ts";
import { archivedEventsAfter } from "./domain/event-archive.ts";
import { articleVersionRoutes } from "./version-rpc.ts";
import { articleErasureRoutes } from "./erasure-rpc.ts";
import { articleRetryRoutes } from "./retry-rpc.ts";
import { sectionRevisionRoutes } from "./revision-rpc.ts";
import { attemptOf as publicationAttemptOf, autoPublishMessage, autoPublishOf, publicationMessage, publicationOf } from "./publication-messages.ts";

const ts = (d: Date) => timestampFromDate(d);
const tsOpt = (d: Date | null) => (d ? timestampFromDate(d) : undefined);
const big = (n: number) => BigInt(n);
const bigOpt = (n: number | null) => (n === null ? undefined : BigInt(n));
const opt = <T>(v: T | null) => (v === null ? undefined : v);
const nullable = <T>(v: T | undefined) => (v === undefined ? null : v);
const numOpt = (n: bigint | undefined) => (n === undefined ? null : Number(n));

const settingsMessage = (s: GenerationSettings): MessageInitShape<typeof GenerationSettingsSchema> => ({
  workflowId: big(s.workflowId),
  workflowRevision: s.workflowRevision,
  builtinWorkflow: s.builtinWorkflow,
  model: s.model,
  targetAudience: opt(s.targetAudience),
  brandVoiceId: bigOpt(s.brandVoiceId),
  includeKeyTakeaways: s.includeKeyTakeaways,
  includeFaq: s.includeFaq,
  headingCapitalization: opt(s.headingCapitalization),
  researchEnabled: s.researchEnabled,
  researchMaxSources: s.researchMaxSources,
  researchMinContentWords: s.researchMinContentWords,
  researchMaxWordsPerSource: s.researchMaxWordsPerSource,
  researchIncludeDomains: s.researchIncludeDomains,
  researchExcludeDomains: s.researchExcludeDomains,
  useBatchApi: s.useBatchApi,
  additionalInstruction: opt(s.additionalInstruction),
  imageCount: s.imageCount,
  imageAspectRatio: opt(s.imageAspectRatio),
  imagePresetId: bigOpt(s.imagePresetId),
  reservedWords: big(s.reservedWords),
  publish: autoPublishMessage(s.publish),
  citations: s.citations ?? "none",
});

const settingsOf = (s: SettingsMessage | undefined): GenerationSettings => {
  if (!s) throw invalidFields({ "article.settings": ["settings are required."] });
  return {
    workflowId: Number(s.workflowId),
    workflowRevision: s.workflowRevision,
    builtinWorkflow: s.builtinWorkflow,
    model: s.model,
    targetAudience: nullable(s.targetAudience),
    brandVoiceId: numOpt(s.brandVoiceId),
    includeKeyTakeaways: s.includeKeyTakeaways,
    includeFaq: s.includeFaq,
    headingCapitalization: nullable(s.headingCapitalization),
    researchEnabled: s.researchEnabled,
    researchMaxSources: s.researchMaxSources,
    researchMinContentWords: s.researchMinContentWords,
    researchMaxWordsPerSource: s.researchMaxWordsPerSource,
    researchIncludeDomains: s.researchIncludeDomains,
    researchExcludeDomains: s.researchExcludeDomains,
    useBatchApi: s.useBatchApi,
    additionalInstruction: nullable(s.additionalInstruction),
    imageCount: s.imageCount,
    imageAspectRatio: nullable(s.imageAspectRatio),
    imagePresetId: numOpt(s.imagePresetId),
    reservedWords: Number(s.reservedWords),
    publish: autoPublishOf(s.publish),
    citations: s.citations || "none",
  };
};

export const sourceMessage = (s: ArticleSourceRecord): MessageInitShape<typeof ArticleSourceSchema> => ({ ...s, fetchedAt: ts(new Date(s.fetchedAt)) });
const sourceOf = (s: SourceMessage): ArticleSourceRecord => ({
  number: s.number,
  url: s.url,
  title: s.title,
  siteName: s.siteName,
  fetchedAt: s.fetchedAt ? timestampDate(s.fetchedAt).toISOString() : "",
  cited: s.cited,
});

export const articleMessage = (a: store.ArticleRecord): MessageInitShape<typeof ArticleSchema> => ({
  id: big(a.id),
  externalId: a.externalId,
  projectId: big(a.projectId),
  accountId: big(a.accountId),
  title: a.title,
  description: opt(a.description),
  content: opt(a.content),
  originalContent: opt(a.originalContent),
  currentVersionId: bigOpt(a.currentVersionId),
  publishedVersionId: bigOpt(a.publishedVersionId),
  status: a.status,
  articleType: a.articleType,
  targetKeyword: opt(a.targetKeyword),
  keywords: a.keywords,
  targetWordCount: a.targetWordCount,
  actualWordCount: a.actualWordCount,
  tone: a.tone,
  pointOfView: a.pointOfView,
  language: a.language,
  countryTargeting: opt(a.countryTargeting),
  aiModelUsed: opt(a.aiModelUsed),
  cost: a.cost,
  currentStep: opt(a.currentStep),
  humanize: a.humanize,
  aiDetectionScore: opt(a.aiDetectionScore),
  originalityCheckedAt: tsOpt(a.originalityCheckedAt),
  additionalContext: opt(a.additionalContext),
  webhookUrl: opt(a.webhookUrl),
  createdAt: ts(a.createdAt),
  updatedAt: ts(a.updatedAt),
  settings: settingsMessage(a.settings),
  failureReason: opt(a.failureReason),
  deliveryFailedAt: tsOpt(a.deliveryFailedAt),
  deliveryFailureReason: opt(a.deliveryFailureReason),
  // A first response stored before images existed has none.
  images: a.images ?? [],
  publications: (a.publications ?? []).map(publicationMessage),
  sources: (a.sources ?? []).map(sourceMessage),
  citationsRemoved: a.citationsRemoved ?? 0,
  quality: a.quality ?? undefined,
});

/**
 * An article RecordDeliveries marked, for the interceptors that announce the change and log the
 * article's end (changed-articles.ts): its ids, status, cost and delivery marks, all they read.
 */
const deliveredArticleMessage = (a: deliveries.DeliveredArticle) =>
  create(ArticleSchema, {
    id: big(a.id),
    externalId: a.externalId,
    projectId: big(a.projectId),
    status: a.status,
    failureReason: opt(a.failureReason),
    cost: a.cost,
    publishedVersionId: bigOpt(a.publishedVersionId),
    deliveryFailedAt: tsOpt(a.deliveryFailedAt),
    deliveryFailureReason: opt(a.deliveryFailureReason),
    updatedAt: ts(a.updatedAt),
  });

function newArticleOf(a: Article | undefined): store.NewArticle {
  if (!a) throw invalidFields({ article: ["article is required."] });
  return {
    externalId: a.externalId,
    accountId: Number(a.accountId),
    projectId: Number(a.projectId),
    title: a.title,
    articleType: a.articleType,
    targetKeyword: nullable(a.targetKeyword),
    keywords: a.keywords,
    targetWordCount: a.targetWordCount,
    tone: a.tone,
    pointOfView: a.pointOfView,
    language: a.language,
    countryTargeting: nullable(a.countryTargeting),
    humanize: a.humanize,
    additionalContext: nullable(a.additionalContext),
    webhookUrl: nullable(a.webhookUrl),
    status: (a.status || "queued") as InitialStatus,
    settings: settingsOf(a.settings),
  };
}

const attemptOf = (a: AttemptMessage): delivery.DeliveryAttempt => ({
  deliveryId: a.deliveryId,
  attempt: a.attempt,
  attemptedAt: a.attemptedAt ? timestampDate(a.attemptedAt) : new Date(),
  statusCode: nullable(a.statusCode),
  error: nullable(a.error),
  durationMs: a.durationMs,
  succeeded: a.succeeded,
  versionId: Number(a.versionId),
});

const brandVoiceMessage = (v: styles.BrandVoiceRecord) => ({ id: big(v.id), projectId: big(v.projectId), name: v.name, description: v.description });
/** A list's place after which its page starts (a cursor's): an article's created_at and id, both required. */
function listPosition(p: ListPosition): listing.ListPosition {
  if (!p.createdAt) throw invalidFields({ "after.created_at": ["after.created_at is required."] });
  return { createdAt: timestampDate(p.createdAt), id: Number(p.id) };
}

const imagePresetMessage = (p: styles.ImagePresetRecord) => ({ id: big(p.id), projectId: big(p.projectId), name: p.name, style: p.style });

const idempotencyOf = (key: string | undefined, hash: string | undefined): idempotency.IdempotencyRequest | undefined =>
  key === undefined ? undefined : { key, requestHash: hash ?? "" };

/** Styles belong to an existing project: checked with accounts-billing, which owns projects. */
async function requireProject(accounts: Client<typeof AccountsService>, projectId: bigint): Promise<number> {
  try {
    await accounts.getProject({ projectId });
  } catch (error) {
    if (error instanceof ConnectError && error.code === Code.NotFound) throw invalidFields({ project_id: ["No such project."] });
    throw error;
  }
  return Number(projectId);
}

export interface ArticleStoreDeps {
  db: Db;
  accounts: Client<typeof AccountsService>;
  /** The relay of created articles to their generation jobs (outbox-relay.ts); absent until it starts. */
  relay(): Pick<OutboxRelay, "note" | "forget" | "wake"> | undefined;
}

export function articleStoreRoutes({ db, accounts, relay }: ArticleStoreDeps) {
  const article = (a: store.ArticleRecord) => ({ article: articleMessage(a) });
  return (router: ConnectRouter) => {
    router.service(ArticleStoreService, {
      async createArticle(req) {
        const externalId = req.article?.externalId ?? "";
        relay()?.note(externalId);
        let created;
        try {
          created = await store.createArticle(db, newArticleOf(req.article), idempotencyOf(req.idempotencyKey, req.requestHash));
        } catch (error) {
          relay()?.forget(externalId);
          throw error;
        }
        // Its outbox row is relayed at once rather than at the next poll.
        if (created.replayed) relay()?.forget(externalId);
        else relay()?.wake();
        return { article: articleMessage(created.article), replayed: created.replayed };
      },
      getArticle: async (req) => article(await store.getArticle(db, req.identifier)),
      batchGetArticlesByExternalId: async (req) => ({ articles: (await store.getArticlesByExternalId(db, req.externalIds)).map(articleMessage) }),
      async listArticles(req) {
        const after = req.after && listPosition(req.after);
        const query = { projectIds: req.projectIds.map(Number), status: req.status || undefined, page: req.page, perPage: req.perPage, after };
        if (req.idsOnly) {
          const page = await listing.listArticleIds(db, query);
          return { articleIds: page.ids.map(big), total: page.total, more: page.more };
        }
        const page = await listing.listArticles(db, query);
        return { articles: page.articles.map(articleMessage), total: page.total, more: page.more };
      },
      batchGetArticles: async (req) => ({ articles: (await store.getArticles(db, req.ids.map(Number))).map(articleMessage) }),
      async findIdempotentArticle(req) {
        const claim = await idempotency.findIdempotencyClaim(db, Number(req.accountId), req.idempotencyKey);
        return { article: claim?.firstResponse ? articleMessage(claim.firstResponse) : undefined, requestHash: claim?.requestHash };
      },
      async claimIdempotencyKey(req) {
        const claim = await idempotency.claimIdempotencyKey(db, Number(req.accountId), { key: req.idempotencyKey, requestHash: req.requestHash });
        return { externalId: claim.externalId, article: claim.firstResponse ? articleMessage(claim.firstResponse) : undefined };
      },
      async createBrandVoice(req) {
        const projectId = await requireProject(accounts, req.projectId);
        return { brandVoice: brandVoiceMessage(await styles.createBrandVoice(db, projectId, req.name, req.description)) };
      },
      async getBrandVoice(req) {
        return { brandVoice: brandVoiceMessage(await styles.getBrandVoice(db, Number(req.brandVoiceId))) };
      },
      async createImagePreset(req) {
        const projectId = await requireProject(accounts, req.projectId);
        return { imagePreset: imagePresetMessage(await styles.createImagePreset(db, projectId, req.name, req.style)) };
      },
      async getImagePreset(req) {
        return { imagePreset: imagePresetMessage(await styles.getImagePreset(db, Number(req.imagePresetId))) };
      },
      async listArticleEvents(req) {
        const page = await archivedEventsAfter(db, req.externalId, req.afterEventId, req.limit);
        return { events: page.events, lastEventId: page.lastEventId ?? "" };
      },
    });

    router.service(ArticleLifecycleService, {
      recordProgress: async (req) =>
        article(await lifecycle.recordProgress(db, req.externalId, { status: req.status, currentStep: req.currentStep, aiModelUsed: req.aiModelUsed, cost: req.cost })),
      completeGeneration: async (req) =>
        article(
          await lifecycle.completeGeneration(db, req.externalId, {
            content: req.content,
            description: req.description,
            actualWordCount: req.actualWordCount,
            aiModelUsed: req.aiModelUsed,
            cost: req.cost,
            moreVersionsFollow: req.moreVersionsFollow,
            images: req.images.map((i) => ({ position: i.position, imageId: i.imageId, url: i.url, alt: i.alt, width: i.width, height: i.height, aspectRatio: i.aspectRatio, mediaType: i.mediaType })),
            aiDetectionScore: req.aiDetectionScore,
            sources: req.sources.map(sourceOf),
            citationsRemoved: req.citationsRemoved,
            quality: req.quality,
          }),
        ),
      async addVersion(req) {
        const added = await lifecycle.addVersion(db, req.externalId, {
          content: req.content,
          kind: req.kind,
          actualWordCount: req.actualWordCount,
          complete: req.complete,
          cost: req.cost,
          aiDetectionScore: req.aiDetectionScore,
          sources: req.sources && { sources: req.sources.sources.map(sourceOf), citationsRemoved: req.sources.citationsRemoved },
          quality: req.quality,
        });
        return { article: articleMessage(added.article), versionId: big(added.version.id) };
      },
      recordOriginality: async (req) => article(await lifecycle.recordOriginality(db, req.externalId, Number(req.versionId), req.aiDetectionScore, req.quality)),
      failArticle: async (req) => article(await lifecycle.failArticle(db, req.externalId, req.reason, req.cost)),
      cancelArticle: async (req) => article((await lifecycle.cancelArticle(db, req.externalId)).article),
      async recordResearchSources(req) {
        await research.recordResearchSources(
          db,
          req.externalId,
          req.sources.map((s) => ({ position: s.position, title: s.title, url: s.url, wordCount: s.wordCount, fetchedAt: s.fetchedAt ? timestampDate(s.fetchedAt) : new Date() })),
        );
        return {};
      },
      async listResearchSources(req) {
        const sources = await research.listResearchSources(db, req.externalId);
        return { sources: sources.map((s): MessageInitShape<typeof ResearchSourceSchema> => ({ ...s, fetchedAt: ts(s.fetchedAt) })) };
      },
      async recordDeliveryAttempt(req) {
        const a = req.attempt;
        if (!a) throw invalidFields({ attempt: ["attempt is required."] });
        await delivery.recordDeliveryAttempt(db, req.externalId, attemptOf(a));
        return {};
      },
      async listDeliveryAttempts(req) {
        const attempts = await delivery.listDeliveryAttempts(db, req.externalId);
        return {
          attempts: attempts.map(
            (a): MessageInitShape<typeof DeliveryAttemptSchema> => ({
              ...a,
              attemptedAt: ts(a.attemptedAt),
              statusCode: opt(a.statusCode),
              error: opt(a.error),
              versionId: big(a.versionId),
            }),
          ),
        };
      },
      markPublished: async (req) => article(await lifecycle.markPublished(db, req.externalId, Number(req.versionId))),
      markDeliveryFailed: async (req) => article(await lifecycle.markDeliveryFailed(db, req.externalId, req.reason)),
      async recordDeliveries(req, ctx) {
        const recorded = await deliveries.recordDeliveries(
          db,
          req.records.map((r) => ({
            externalId: r.externalId,
            attempt: r.attempt && attemptOf(r.attempt),
            ending:
              r.ending.case === "published" ? { kind: "published" as const }
              : r.ending.case === "deliveryFailureReason" ? { kind: "delivery-failed" as const, reason: r.ending.value }
              : undefined,
          })),
        );
        ctx.values.set(markedByDeliveries, { published: recorded.published.map(deliveredArticleMessage), deliveryFailed: recorded.deliveryFailed.map(deliveredArticleMessage) });
        return { results: recorded.errors.map((e) => ({ error: e && { code: codeToString(toConnectError(e).code), message: e.message } })) };
      },
      recordPublication: async (req) =>
        article(
          await recordPublication(db, req.externalId, {
            publication: publicationOf(req.publication),
            attempt: req.attempt && publicationAttemptOf(req.attempt),
            markPublished: req.markPublished,
          }),
        ),
    });

    articleVersionRoutes(router, db, { articleMessage, sourceMessage });
    articleErasureRoutes(router, db);
    articleRetryRoutes(router, db, articleMessage, () => relay()?.wake());
    sectionRevisionRoutes(router, db, { articleMessage, sourceMessage }, () => relay()?.wake());
  };
}
