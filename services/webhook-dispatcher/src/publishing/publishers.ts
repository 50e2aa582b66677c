// One face for every kind of destination: check the connection, publish an article as a post,
// remove that post.
// Each kind's client does the site's own work (wordpress.ts, ghost.ts); errors they throw carry
// `retryable`, so the job knows whether to try again.
import type { Destination } from "../domain/destinations.ts";
import type { PostSettings } from "./post-settings.ts";
import { ghostClient, type GhostStatus } from "./ghost.ts";
import { wordPressClient, type ArticleImageFile } from "./wordpress.ts";

export interface ArticleToPost {
  /** The article's external_id: the marker that finds its post again. */
  articleKey: string;
  title: string;
  /** Clean HTML (article-html.ts), images still at the article's URLs. */
  html: string;
  excerpt?: string;
  images: ArticleImageFile[];
  settings: PostSettings;
  /** The post an earlier publication made, when the article recorded it. */
  remoteId?: string;
}

export interface PostedArticle {
  remoteId: string;
  url: string;
  status: string;
  created: boolean;
}

/** A field of a destination the site's answer shows to be wrong (rather than the site unavailable). */
export type RefusedField = "credential" | "site_url";

export interface DestinationCheck {
  ok: boolean;
  problems: string[];
  /** Set when the site refused the credential, or its address cannot be used. */
  refusedField?: RefusedField;
  userName?: string;
  canCreatePosts: boolean;
  canPublishPosts: boolean;
  canUploadMedia: boolean;
}

export interface Publisher {
  check(): Promise<DestinationCheck>;
  publish(post: ArticleToPost): Promise<PostedArticle>;
  /** Deletes the article's post (by the id recorded, else its marker); false when the site has none. */
  unpublish(post: Pick<ArticleToPost, "articleKey" | "remoteId">): Promise<boolean>;
}

/** What a publishing client throws: whether to try again, and what the site said. */
export interface PublishFailure extends Error {
  retryable: boolean;
  status?: number;
  retryAfterMs?: number;
}

export const isPublishFailure = (error: unknown): error is PublishFailure => error instanceof Error && typeof (error as { retryable?: unknown }).retryable === "boolean";

/** The site of a destination: enough to connect to it. */
export type DestinationSite = Pick<Destination, "kind" | "siteUrl" | "username">;

// Failures that say the address itself cannot be used: not allowed by the guard, not a web
// address, or a REST root on another origin.
const ADDRESS_CODES = new Set(["refused_address", "bad_site_url", "foreign_rest_root"]);

function refusedFieldOf(error: { status?: number; code: string } | undefined): RefusedField | undefined {
  if (!error) return undefined;
  // WordPress answers an unknown login and a wrong password alike (401 rest_not_logged_in): both are the credential's.
  if (error.status === 401) return "credential";
  return ADDRESS_CODES.has(error.code) ? "site_url" : undefined;
}

export function publisherFor(destination: DestinationSite, credential: string, fetchFn: typeof fetch): Publisher {
  return destination.kind === "ghost" ? ghostPublisher(destination, credential, fetchFn) : wordPressPublisher(destination, credential, fetchFn);
}

function ghostPublisher(destination: DestinationSite, credential: string, fetchFn: typeof fetch): Publisher {
  const client = ghostClient({ siteUrl: destination.siteUrl, adminApiKey: credential, fetch: fetchFn });
  return {
    async check() {
      const c = await client.checkConnection();
      // An integration's key may do everything the Admin API allows: posts, publishing, images.
      return { ok: c.ok, problems: c.problems, refusedField: refusedFieldOf(c.error), userName: c.siteTitle, canCreatePosts: c.ok, canPublishPosts: c.ok, canUploadMedia: c.ok };
    },
    async publish(post) {
      const { settings } = post;
      const published = await client.publishPost({
        articleKey: post.articleKey,
        title: post.title,
        html: post.html,
        excerpt: post.excerpt,
        slug: settings.slug,
        status: settings.status as GhostStatus,
        publishAt: settings.publishAt,
        tags: settings.tags,
        images: post.images,
        postId: post.remoteId,
      });
      return { remoteId: published.id, url: published.url, status: published.status, created: published.created };
    },
    unpublish: (post) => client.removeArticlePost(post.articleKey, post.remoteId),
  };
}

/** A recorded post id as WordPress numbers posts; anything else is no hint. */
const wordPressPostId = (remoteId: string | undefined) => (remoteId && /^\d+$/.test(remoteId) ? Number(remoteId) : undefined);

function wordPressPublisher(destination: DestinationSite, credential: string, fetchFn: typeof fetch): Publisher {
  const client = wordPressClient({ siteUrl: destination.siteUrl, username: destination.username ?? "", applicationPassword: credential, fetch: fetchFn });
  return {
    async check() {
      const c = await client.checkConnection();
      return { ok: c.ok, problems: c.problems, refusedField: refusedFieldOf(c.error), userName: c.user?.name, canCreatePosts: c.can.createPosts, canPublishPosts: c.can.publishPosts, canUploadMedia: c.can.uploadFiles };
    },
    async publish(post) {
      const { settings } = post;
      const postId = wordPressPostId(post.remoteId);
      const published = await client.publishPost({
        articleKey: post.articleKey,
        title: post.title,
        html: post.html,
        excerpt: post.excerpt,
        slug: settings.slug,
        status: settings.status as "draft",
        date: settings.publishAt,
        categories: settings.categories,
        tags: settings.tags,
        author: settings.authorId,
        images: post.images,
        postId,
      });
      return { remoteId: String(published.id), url: published.link, status: published.status, created: published.created };
    },
    unpublish: (post) => client.removeArticlePost(post.articleKey, wordPressPostId(post.remoteId)),
  };
}
