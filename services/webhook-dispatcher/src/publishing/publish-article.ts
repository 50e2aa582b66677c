// One attempt at publishing an article to a destination, from the article's state to what the
// article records: the attempt and where the post stands (RecordPublication), published when the
// destination is the article's handover. Errors of our own services propagate (the worker waits
// for them without spending an attempt); the site's answers become outcomes. The article's
// content and word ledger are never touched: a failed publication changes only its own record.
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Article, ArticleLifecycleService, ArticleStoreService, Publication } from "../../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import type { ArticleImageService } from "../../../../proto/gen/articles/generation_runner/v1/images_pb.ts";
import { DomainError } from "../../../kit/src/errors.ts";
import type { PublishingJob } from "../../../kit/src/queues.ts";
import type { Db } from "../db/client.ts";
import { openDestination, type Destination } from "../domain/destinations.ts";
import { articleHtml } from "./article-html.ts";
import { postSettings } from "./post-settings.ts";
import { isPublishFailure, publisherFor, type PostedArticle } from "./publishers.ts";
import type { ArticleImageFile } from "./wordpress.ts";

export interface PublishingServices {
  articles: Client<typeof ArticleStoreService>;
  lifecycle: Client<typeof ArticleLifecycleService>;
  images: Client<typeof ArticleImageService>;
}

export interface PublishingContext {
  db: Db;
  services: PublishingServices;
  secretKey: Buffer;
  /** Attempts in all for one request, and the waits between them (the last repeats). */
  attempts: number;
  backoffMs: readonly number[];
  /** The guarded fetch (guarded-fetch.ts). */
  fetch: typeof fetch;
}

export type PublishOutcome =
  | { kind: "published"; post: PostedArticle }
  | { kind: "retry"; delayMs: number; error: string }
  | { kind: "failed"; reason: string }
  | { kind: "not-published"; reason: string };

// A site's Retry-After is honoured, within reason: a job is not parked for longer than this.
const LONGEST_WAIT_MS = 3_600_000;

async function articleOf(ctx: PublishingContext, externalId: string): Promise<Article | undefined> {
  try {
    return (await ctx.services.articles.getArticle({ identifier: externalId })).article;
  } catch (error) {
    if (error instanceof ConnectError && error.code === Code.NotFound) return undefined;
    throw error;
  }
}

/** The article's images as files to upload, read from generation-runner's image store. */
async function imageFiles(ctx: PublishingContext, article: Article): Promise<ArticleImageFile[]> {
  return Promise.all(
    article.images.map(async (image) => {
      const file = await ctx.services.images.getImage({ imageId: image.imageId });
      const slug = article.title.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "").slice(0, 60) || "article";
      return { url: image.url, bytes: file.data, contentType: file.mediaType, filename: `${slug}-${image.position}.${file.extension}`, alt: image.alt };
    }),
  );
}

export async function attemptPublication(ctx: PublishingContext, job: PublishingJob, attempt: number): Promise<PublishOutcome> {
  const article = await articleOf(ctx, job.externalId);
  if (!article) return { kind: "not-published", reason: "article not found" };
  if (article.status !== "completed" && article.status !== "published") return { kind: "not-published", reason: `the article is ${article.status}` };
  const versionId = article.currentVersionId!;
  const attemptedAt = new Date();
  const before = article.publications.find((p) => Number(p.destinationId) === job.destinationId);

  const record = (destinationKind: string, state: "publishing" | "published" | "failed", outcome: "published" | "retry" | "failed", fields: Partial<Publication> & { statusCode?: number }) =>
    ctx.services.lifecycle.recordPublication({
      externalId: job.externalId,
      publication: {
        destinationId: BigInt(job.destinationId),
        destinationKind,
        state,
        remoteId: fields.remoteId ?? before?.remoteId,
        remoteUrl: fields.remoteUrl ?? before?.remoteUrl,
        remoteStatus: fields.remoteStatus ?? before?.remoteStatus,
        versionId,
        error: fields.error,
        requestedAt: timestampFromDate(new Date(job.requestedAt)),
      },
      attempt: { attempt, attemptedAt: timestampFromDate(attemptedAt), outcome, statusCode: fields.statusCode, error: fields.error, durationMs: Date.now() - attemptedAt.getTime(), versionId },
      // The handover of an article without a webhook is its publication (with one, the webhook's delivery is).
      markPublished: state === "published" && !article.webhookUrl,
    });

  let destination: Destination;
  let credential: string;
  try {
    ({ destination, credential } = await openDestination(ctx.db, ctx.secretKey, Number(article.projectId), job.destinationId));
  } catch (error) {
    if (!(error instanceof DomainError && error.kind === "not_found")) throw error;
    const reason = "The destination was deleted.";
    await record(before?.destinationKind ?? "", "failed", "failed", { error: reason });
    return { kind: "failed", reason };
  }

  let post: PostedArticle;
  try {
    const settings = postSettings(destination, job.options, attemptedAt.getTime());
    const { html, heading } = articleHtml(article.content ?? "", article.images);
    post = await publisherFor(destination, credential, ctx.fetch).publish({
      articleKey: job.externalId,
      title: heading ?? article.title,
      html,
      excerpt: article.description,
      images: await imageFiles(ctx, article),
      settings,
      remoteId: before?.remoteId,
    });
  } catch (error) {
    if (error instanceof DomainError && error.kind === "invalid") {
      const reason = `The publish options are no longer valid: ${Object.values(error.fields).flat().join(" ")}`;
      await record(destination.kind, "failed", "failed", { error: reason });
      return { kind: "failed", reason };
    }
    if (!isPublishFailure(error)) throw error;
    const last = attempt >= ctx.attempts;
    const failure = { error: error.message, statusCode: error.status };
    if (error.retryable && !last) {
      await record(destination.kind, "publishing", "retry", failure);
      const backoff = ctx.backoffMs[Math.min(attempt - 1, ctx.backoffMs.length - 1)] ?? 10_000;
      return { kind: "retry", delayMs: Math.min(Math.max(backoff, error.retryAfterMs ?? 0), LONGEST_WAIT_MS), error: error.message };
    }
    await record(destination.kind, "failed", "failed", failure);
    return { kind: "failed", reason: error.message };
  }
  await record(destination.kind, "published", "published", { remoteId: post.remoteId, remoteUrl: post.url, remoteStatus: post.status });
  return { kind: "published", post };
}
