// Publishing an article to a Ghost site as a real post, through Ghost's Admin API with a custom
// integration's Admin API key ("<id>:<secret>"): each request carries a short-lived token (HS256,
// audience /admin/, five minutes) signed with the key's secret, as Ghost's own Admin API client
// does. Publishing is repeatable: the post carries a private tag (Ghost's internal tags start
// with "#" and never show on the site) naming the article, so a retried job or a second publish
// finds the post it made before and updates it. No newsletter goes out: Ghost emails a post only
// when the request names a newsletter, and this client never does.
import { createHmac } from "node:crypto";
import { isRetryableStatus, redact, retryAfterMs } from "./wordpress-errors.ts";

export interface GhostAccess {
  /** The site's address, e.g. https://blog.example.com (Ghost's Admin API lives under /ghost/api/admin/). */
  siteUrl: string;
  /** A custom integration's Admin API key: "<24 hex id>:<64 hex secret>". */
  adminApiKey: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

/** What went wrong talking to a Ghost site, sorted as the publishing job acts on it (like WordPressError). */
export class GhostError extends Error {
  override readonly name = "GhostError";
  readonly retryable: boolean;
  readonly status?: number;
  readonly code: string;
  readonly retryAfterMs?: number;

  constructor(details: { retryable: boolean; status?: number; code: string; message: string; retryAfterMs?: number }) {
    super(details.message);
    this.retryable = details.retryable;
    this.status = details.status;
    this.code = details.code;
    this.retryAfterMs = details.retryAfterMs;
  }
}

export type GhostStatus = "draft" | "published" | "scheduled";

export interface GhostImageFile {
  /** Where the article shows it; rewritten to the uploaded copy. */
  url: string;
  bytes: Uint8Array;
  contentType: string;
  filename: string;
  alt: string;
}

export interface GhostArticlePost {
  articleKey: string;
  title: string;
  html: string;
  excerpt?: string;
  slug?: string;
  status: GhostStatus;
  /** When a scheduled post goes live. */
  publishAt?: Date;
  tags?: readonly string[];
  images?: readonly GhostImageFile[];
  /** The post an earlier publish made, when the caller kept its id. */
  postId?: string;
}

export interface GhostPublishedPost {
  id: string;
  url: string;
  status: string;
  slug: string;
  created: boolean;
}

export interface GhostConnectionCheck {
  ok: boolean;
  siteTitle?: string;
  problems: string[];
  /** The failure behind `ok: false`. */
  error?: GhostError;
}

interface PostRecord {
  id: string;
  url: string;
  slug: string;
  status: string;
  updated_at: string;
  tags?: { name: string; slug: string }[];
}

// Ghost's excerpt field takes at most 300 characters.
const EXCERPT_MAX = 300;
const ACCEPT_VERSION = "v5.0";

/** The private tag that names an article's post. */
export const ghostArticleTag = (articleKey: string) => `#article-service-${articleKey}`;
/** Its slug, as Ghost makes it ("#" becomes "hash-"). */
const tagSlug = (articleKey: string) => `hash-article-service-${articleKey.toLowerCase().replace(/[^a-z0-9]+/g, "-")}`;

const base64url = (data: Buffer | string) => Buffer.from(data).toString("base64url");

/** A five-minute Admin API token for the key, as Ghost's documentation describes it. */
export function ghostAdminToken(adminApiKey: string, now = Date.now()): string {
  const [id, secret] = adminApiKey.split(":");
  const iat = Math.floor(now / 1000);
  const header = base64url(JSON.stringify({ alg: "HS256", typ: "JWT", kid: id }));
  const payload = base64url(JSON.stringify({ iat, exp: iat + 300, aud: "/admin/" }));
  const signature = createHmac("sha256", Buffer.from(secret ?? "", "hex")).update(`${header}.${payload}`).digest("base64url");
  return `${header}.${payload}.${signature}`;
}

export function ghostClient(access: GhostAccess) {
  const fetchFn = access.fetch ?? fetch;
  const timeoutMs = access.timeoutMs ?? 30_000;
  const root = new URL("ghost/api/admin/", access.siteUrl.replace(/\/?$/, "/")).href;
  const secrets = [access.adminApiKey, access.adminApiKey.split(":")[1] ?? access.adminApiKey];

  async function call<T>(path: string, init: { method?: string; json?: unknown; form?: FormData; auth?: boolean } = {}): Promise<T> {
    const method = init.method ?? "GET";
    const request = `${method} ${path.split("?")[0]}`;
    const headers: Record<string, string> = { "accept-version": ACCEPT_VERSION, accept: "application/json" };
    if (init.auth !== false) headers.authorization = `Ghost ${ghostAdminToken(access.adminApiKey)}`;
    let body: BodyInit | undefined;
    if (init.json !== undefined) {
      headers["content-type"] = "application/json";
      body = JSON.stringify(init.json);
    } else if (init.form) {
      // Encoded here so the address guard's fetch (which takes bytes) sends the multipart body as is.
      const encoded = new Response(init.form);
      headers["content-type"] = encoded.headers.get("content-type")!;
      body = new Uint8Array(await encoded.arrayBuffer());
    }
    let response: Response;
    let text: string;
    try {
      response = await fetchFn(root + path, { method, headers, body, redirect: "follow", signal: AbortSignal.timeout(body ? timeoutMs * 2 : timeoutMs) });
      text = await response.text();
    } catch (error) {
      const refused = error instanceof Error && error.name === "RefusedRequest";
      const why = error instanceof Error ? error.message : String(error);
      throw new GhostError({ retryable: !refused, code: refused ? "refused_address" : "network", message: redact(`${request}: ${refused ? "the site's address is not allowed" : "could not reach the site"} (${why})`, secrets) });
    }
    let data: unknown;
    try {
      data = text ? JSON.parse(text) : undefined;
    } catch {
      data = undefined;
    }
    if (!response.ok) {
      const first = (data as { errors?: { message?: string; type?: string; context?: string }[] } | undefined)?.errors?.[0];
      const meaning =
        response.status === 401 ? "Ghost rejected the Admin API key"
        : response.status === 403 ? "the integration may not do this"
        : response.status === 404 && data === undefined ? "no Ghost Admin API at this address"
        : undefined;
      const told = [first?.message, first?.context].filter(Boolean).join(" ");
      const said = meaning ? (told ? `${meaning} (${told})` : meaning) : told || response.statusText || "request failed";
      throw new GhostError({
        retryable: isRetryableStatus(response.status),
        status: response.status,
        code: first?.type ?? `http_${response.status}`,
        message: redact(`${request}: ${response.status} ${said}`, secrets),
        retryAfterMs: retryAfterMs(response.headers.get("retry-after")),
      });
    }
    // A deletion answers 204 without a body.
    if (data === undefined && method === "DELETE") return undefined as T;
    if (data === undefined) throw new GhostError({ retryable: false, status: response.status, code: "not_json", message: `${request}: the site did not answer with JSON: is ${access.siteUrl} a Ghost site?` });
    return data as T;
  }

  async function findPost(articleKey: string, postId?: string): Promise<PostRecord | undefined> {
    const carries = (post: PostRecord) => post.tags?.some((t) => t.slug === tagSlug(articleKey)) ?? false;
    if (postId) {
      try {
        const { posts } = await call<{ posts: PostRecord[] }>(`posts/${encodeURIComponent(postId)}/?include=tags`);
        if (posts[0] && carries(posts[0])) return posts[0];
      } catch (error) {
        if (!(error instanceof GhostError && error.status === 404)) throw error;
      }
    }
    const { posts } = await call<{ posts: PostRecord[] }>(`posts/?filter=${encodeURIComponent(`tag:${tagSlug(articleKey)}`)}&include=tags&limit=all`);
    return posts.find(carries);
  }

  async function uploadImage(image: GhostImageFile): Promise<string> {
    const form = new FormData();
    form.append("file", new Blob([new Uint8Array(image.bytes)], { type: image.contentType }), image.filename);
    form.append("purpose", "image");
    form.append("ref", image.url);
    const { images } = await call<{ images: { url: string }[] }>("images/upload/", { method: "POST", form });
    return images[0]!.url;
  }

  return {
    async checkConnection(): Promise<GhostConnectionCheck> {
      try {
        const { site } = await call<{ site: { title?: string } }>("site/", { auth: false });
        await call("posts/?limit=1&fields=id");
        return { ok: true, siteTitle: site?.title, problems: [] };
      } catch (error) {
        if (!(error instanceof GhostError)) throw error;
        const problem =
          error.status === 401 ? "Ghost rejected the Admin API key."
          : error.status === 403 ? "The integration may not write posts."
          : error.status === 404 || error.code === "not_json" ? "No Ghost Admin API was found at this address."
          : error.retryable ? `The site could not be reached just now (${error.message}).`
          : error.message;
        return { ok: false, problems: [problem], error };
      }
    },

    async publishPost(post: GhostArticlePost): Promise<GhostPublishedPost> {
      if (post.status === "scheduled" && !post.publishAt) throw new GhostError({ retryable: false, code: "missing_date", message: "a scheduled post needs a publication date" });
      const existing = await findPost(post.articleKey, post.postId);
      const uploaded = new Map<string, string>();
      for (const image of post.images ?? []) uploaded.set(image.url, await uploadImage(image));
      let html = post.html;
      for (const [from, to] of uploaded) html = html.split(from).join(to);
      const featured = post.images?.[0];
      const fields = {
        title: post.title,
        html,
        status: post.status,
        published_at: post.publishAt?.toISOString(),
        slug: post.slug,
        custom_excerpt: post.excerpt?.slice(0, EXCERPT_MAX),
        meta_description: post.excerpt?.slice(0, EXCERPT_MAX),
        feature_image: featured ? uploaded.get(featured.url) : null,
        feature_image_alt: featured?.alt ?? null,
        tags: [...(post.tags ?? []).map((name) => ({ name })), { name: ghostArticleTag(post.articleKey) }],
      };
      const { posts } = existing
        ? await call<{ posts: PostRecord[] }>(`posts/${existing.id}/?source=html`, { method: "PUT", json: { posts: [{ ...fields, updated_at: existing.updated_at }] } })
        : await call<{ posts: PostRecord[] }>("posts/?source=html", { method: "POST", json: { posts: [fields] } });
      const saved = posts[0]!;
      return { id: saved.id, url: saved.url, status: saved.status, slug: saved.slug, created: !existing };
    },

    /** Deletes the article's post (found by its tag, as publishing finds it); false when there is none. */
    async removeArticlePost(articleKey: string, postId?: string): Promise<boolean> {
      const existing = await findPost(articleKey, postId);
      if (!existing) return false;
      try {
        await call(`posts/${encodeURIComponent(existing.id)}/`, { method: "DELETE" });
      } catch (error) {
        // Deleted meanwhile: what was asked for holds.
        if (!(error instanceof GhostError && error.status === 404)) throw error;
      }
      return true;
    },
  };
}
