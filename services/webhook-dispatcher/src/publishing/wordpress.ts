// Publishing an article to a WordPress site as a real post, through the site's REST API as one
// of its users (an application password). Publishing is repeatable: the post carries a hidden
// marker naming the article, so a retried job or a second publish finds the post it made before
// and updates it instead of making another.
import { withHiddenComment, withUploadedImages } from "./article-html.ts";
import { htmlText } from "./html-text.ts";
import { WordPressError } from "./wordpress-errors.ts";
import { attachToPost, ensureImages, uploadImage, type ImageFile, type UploadedMedia } from "./wordpress-media.ts";
import { wordPressRest, type WordPressRest, type WordPressRestOptions } from "./wordpress-rest.ts";
import { termIdsByName, type Taxonomy } from "./wordpress-terms.ts";

export { WordPressError } from "./wordpress-errors.ts";
export type { ImageFile, UploadedMedia } from "./wordpress-media.ts";
export type { WordPressRestOptions as WordPressClientOptions } from "./wordpress-rest.ts";

export type PostStatus = "draft" | "pending" | "private" | "publish" | "future";

/** An image of the article, with the URL the article's HTML shows it at. */
export interface ArticleImageFile extends ImageFile {
  url: string;
}

export interface ArticlePost {
  /** The article's identity on this service, written into the post as a hidden marker. */
  articleKey: string;
  /** Plain text (escaped here: WordPress keeps titles and excerpts as HTML). */
  title: string;
  /** The post's body (article-html.ts); its images still at the article's URLs. */
  html: string;
  /** Plain text, escaped like the title. */
  excerpt?: string;
  slug?: string;
  status: PostStatus;
  /** When the post is (or is scheduled to be) published; needed for "future". */
  date?: Date;
  /** Category and tag names; missing ones are created. */
  categories?: readonly string[];
  tags?: readonly string[];
  /** The WordPress user id to publish as; the connected user when left out. */
  author?: number;
  /** Uploaded to the media library, and their URLs in `html` pointed at the uploads. */
  images?: readonly ArticleImageFile[];
  /** The URL (among `images`) of the featured image: the first image when left out, none when null. */
  featuredImageUrl?: string | null;
  /** The post an earlier publish made, when the caller kept its id. */
  postId?: number;
}

export interface PublishedPost {
  id: number;
  /** The post's address on the site. */
  link: string;
  status: string;
  slug: string;
  /** False when an existing post was updated. */
  created: boolean;
  /** The media item of each image, by the image's URL in the article. */
  media: Map<string, UploadedMedia>;
  featuredMediaId: number;
}

export interface FoundPost {
  id: number;
  link: string;
  status: string;
  slug: string;
}

export interface ConnectionCheck {
  /** The site answered, accepted the credentials, and the user may write posts. */
  ok: boolean;
  restRoot?: string;
  user?: { id: number; name: string; roles: string[] };
  can: { createPosts: boolean; publishPosts: boolean; uploadFiles: boolean; createTerms: boolean };
  /** One sentence each, for whoever connects the site. */
  problems: string[];
  /** The failure behind `ok: false`, when a request failed. */
  error?: WordPressError;
}

export interface WordPressClient {
  checkConnection(): Promise<ConnectionCheck>;
  uploadImage(image: ImageFile, options?: { postId?: number }): Promise<UploadedMedia>;
  termIds(taxonomy: Taxonomy, names: readonly string[]): Promise<number[]>;
  findArticlePost(articleKey: string, hints?: { postId?: number; slug?: string }): Promise<FoundPost | undefined>;
  publishPost(post: ArticlePost): Promise<PublishedPost>;
  /** Deletes the article's post for good (not to the trash); false when there is none. */
  removeArticlePost(articleKey: string, postId?: number): Promise<boolean>;
}

/** The text of the hidden comment that names an article in its post's content. */
function markerText(articleKey: string): string {
  // Letters and digits only, anything else as _<hex>: nothing can close the comment or be folded
  // by WordPress's comment filter ("--"), and the text survives the search parameter's
  // sanitize_text_field, which strips percent escapes (a %2D-encoded key was never found again).
  const key = [...articleKey].map((c) => (/[A-Za-z0-9]/.test(c) ? c : `_${c.codePointAt(0)!.toString(16)}`)).join("");
  return `article-service:${key}`;
}

/** The hidden comment that names an article in its post's content. */
export const articleMarker = (articleKey: string) => `<!-- ${markerText(articleKey)} -->`;

interface PostRecord {
  id: number;
  link: string;
  status: string;
  slug: string;
  content?: { raw?: string };
}

const POST_FIELDS = "id,link,status,slug,content";
const found = (post: PostRecord): FoundPost => ({ id: post.id, link: post.link, status: post.status, slug: post.slug });

interface UserRecord {
  id: number;
  name: string;
  roles?: string[];
  capabilities?: Record<string, boolean>;
}

export function wordPressClient(options: WordPressRestOptions): WordPressClient {
  const rest = wordPressRest(options);
  return {
    checkConnection: () => checkConnection(rest),
    uploadImage: (image, o = {}) => uploadImage(rest, image, o),
    termIds: (taxonomy, names) => termIdsByName(rest, taxonomy, names),
    findArticlePost: (key, hints) => findArticlePost(rest, key, hints),
    publishPost: (post) => publishPost(rest, post),
    removeArticlePost: (key, postId) => removeArticlePost(rest, key, postId),
  };
}

/** The post carrying the article's marker deleted (force: not kept in the trash, where the site would still hold the text). */
async function removeArticlePost(rest: WordPressRest, articleKey: string, postId?: number): Promise<boolean> {
  const existing = await findArticlePost(rest, articleKey, { postId });
  if (!existing) return false;
  try {
    await rest.call(`wp/v2/posts/${existing.id}`, { method: "DELETE", query: { force: true } });
  } catch (error) {
    // Deleted meanwhile: what was asked for holds.
    if (!(error instanceof WordPressError && (error.status === 404 || error.status === 410))) throw error;
  }
  return true;
}

async function checkConnection(rest: WordPressRest): Promise<ConnectionCheck> {
  const none = { createPosts: false, publishPosts: false, uploadFiles: false, createTerms: false };
  let restRoot: string | undefined;
  try {
    restRoot = await rest.root();
    const { data: user } = await rest.call<UserRecord>("wp/v2/users/me", { query: { context: "edit", _fields: "id,name,roles,capabilities" } });
    const caps = user.capabilities ?? {};
    const can = { createPosts: !!caps.edit_posts, publishPosts: !!caps.publish_posts, uploadFiles: !!caps.upload_files, createTerms: !!caps.manage_categories };
    const problems = [
      can.createPosts ? "" : "The user may not write posts: give it the Author role or above.",
      !can.createPosts || can.publishPosts ? "" : "The user may only submit posts for review (Contributor): posts can be sent as pending, not published.",
      !can.createPosts || can.uploadFiles ? "" : "The user may not upload files: articles' images cannot be added to the media library.",
      !can.createPosts || can.createTerms ? "" : "The user may not create categories or tags: only ones the site already has can be used.",
    ].filter(Boolean);
    return { ok: can.createPosts, restRoot, user: { id: user.id, name: user.name, roles: user.roles ?? [] }, can, problems };
  } catch (error) {
    if (!(error instanceof WordPressError)) throw error;
    return { ok: false, restRoot, can: none, problems: [problemOf(error)], error };
  }
}

function problemOf(error: WordPressError): string {
  if (error.status === 401) return "WordPress rejected the username or application password.";
  if (error.status === 403) return "WordPress refused the request: the REST API may be blocked for this user or by a security plugin.";
  if (error.status === 404 || error.code === "not_json") return "No WordPress REST API was found at this address.";
  if (error.retryable) return `The site could not be reached just now (${error.message}).`;
  return error.message;
}

/** The post that carries the article's marker: at the id it had, under its slug, else by searching for the marker. */
async function findArticlePost(rest: WordPressRest, articleKey: string, hints: { postId?: number; slug?: string } = {}): Promise<FoundPost | undefined> {
  const marker = articleMarker(articleKey);
  const carries = (post: PostRecord) => post.content?.raw?.includes(marker) ?? false;
  if (hints.postId) {
    try {
      const { data } = await rest.call<PostRecord>(`wp/v2/posts/${hints.postId}`, { query: { context: "edit", _fields: POST_FIELDS } });
      if (carries(data) && data.status !== "trash") return found(data);
    } catch (error) {
      // Deleted since: publishing makes it again.
      if (!(error instanceof WordPressError && (error.status === 404 || error.status === 410))) throw error;
    }
  }
  const lists = [hints.slug ? { slug: hints.slug } : undefined, { search: markerText(articleKey) }].filter(Boolean);
  for (const query of lists) {
    const { data } = await rest.call<PostRecord[]>("wp/v2/posts", { query: { ...query, status: "any", context: "edit", per_page: 100, _fields: POST_FIELDS } });
    const post = data.find(carries);
    if (post) return found(post);
  }
  return undefined;
}

async function publishPost(rest: WordPressRest, post: ArticlePost): Promise<PublishedPost> {
  if (post.status === "future" && !post.date) {
    throw new WordPressError({ retryable: false, code: "missing_date", message: "a scheduled (future) post needs a publication date" });
  }
  const images = new Map((post.images ?? []).map((image) => [image.url, image]));
  const featuredUrl = post.featuredImageUrl === undefined ? post.images?.[0]?.url : post.featuredImageUrl;
  if (featuredUrl && !images.has(featuredUrl)) {
    throw new WordPressError({ retryable: false, code: "unknown_featured_image", message: `the featured image ${featuredUrl} is not among the article's images` });
  }
  // A wrong password makes WordPress treat the requests as anonymous ones rather than refuse them:
  // asked first, it answers 401 instead of a puzzling error further on.
  await rest.call("wp/v2/users/me", { query: { _fields: "id" } });
  const existing = await findArticlePost(rest, post.articleKey, { postId: post.postId, slug: post.slug });

  const media = await ensureImages(rest, images, existing?.id);
  const featured = featuredUrl ? media.get(featuredUrl) : undefined;

  const [categories, tags] = await Promise.all([
    post.categories ? termIdsByName(rest, "categories", post.categories) : undefined,
    post.tags ? termIdsByName(rest, "tags", post.tags) : undefined,
  ]);
  const fields = {
    title: htmlText(post.title),
    content: withHiddenComment(withUploadedImages(post.html, new Map([...media].map(([url, m]) => [url, { id: m.id, sourceUrl: m.sourceUrl }]))), markerText(post.articleKey)),
    excerpt: post.excerpt === undefined ? undefined : htmlText(post.excerpt),
    slug: post.slug,
    status: post.status,
    date_gmt: post.date ? post.date.toISOString().replace(/\.\d{3}Z$/, "") : undefined,
    categories,
    tags,
    author: post.author,
    featured_media: featured?.id ?? 0,
  };
  const route = existing ? `wp/v2/posts/${existing.id}` : "wp/v2/posts";
  const { data } = await rest.call<PostRecord>(route, { method: "POST", json: fields, query: { context: "edit", _fields: "id,link,status,slug" } });
  await attachToPost(rest, media.values(), data.id);
  return { ...found(data), created: !existing, media, featuredMediaId: featured?.id ?? 0 };
}
