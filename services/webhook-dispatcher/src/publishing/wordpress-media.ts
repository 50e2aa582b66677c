// An article's images in the site's media library. Each upload is named by its bytes (the slug
// ends in a hash of them), so publishing the same article again, or a retried job, finds the
// images already there instead of filling the library with copies.
import { createHash } from "node:crypto";
import { htmlText } from "./html-text.ts";
import type { WordPressRest } from "./wordpress-rest.ts";

export interface ImageFile {
  bytes: Uint8Array;
  /** e.g. "image/png". */
  contentType: string;
  /** The file name the library shows, e.g. "espresso-grind.png". */
  filename: string;
  /** Alternative text, as the article has it (plain text). */
  alt: string;
  /** The media item's title (plain text); the alt text when left out. */
  title?: string;
}

export interface UploadedMedia {
  id: number;
  /** Where the site serves the file. */
  sourceUrl: string;
  altText: string;
  /** False when the library already held these bytes under this name. */
  uploaded: boolean;
  /** The post the media item is attached to (0: none). */
  postId: number;
}

interface MediaItem {
  id: number;
  slug: string;
  source_url: string;
  alt_text: string;
  post: number | null;
}

const MEDIA_FIELDS = "id,slug,source_url,alt_text,post";
const EXTENSIONS: Record<string, string> = { "image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "image/gif": "gif", "image/avif": "avif", "image/svg+xml": "svg" };

/** The file's name as plain ASCII words, with an extension that matches its type. */
function fileNameOf(image: ImageFile): { stem: string; name: string } {
  const given = image.filename.normalize("NFKD").replace(/[\u0300-\u036f]/g, "");
  const dot = given.lastIndexOf(".");
  const stem =
    (dot > 0 ? given.slice(0, dot) : given)
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 60) || "image";
  const extension = EXTENSIONS[image.contentType.split(";")[0]!.trim().toLowerCase()] ?? (dot > 0 ? given.slice(dot + 1).toLowerCase().replace(/[^a-z0-9]/g, "") : "bin");
  return { stem, name: `${stem}.${extension}` };
}

/** The slug an image is kept under: its name and the start of its bytes' SHA-256. */
export function mediaSlugOf(image: ImageFile): string {
  return `${fileNameOf(image).stem}-${createHash("sha256").update(image.bytes).digest("hex").slice(0, 16)}`;
}

// WordPress strips tags from alt text (sanitize_text_field) and prints it through esc_attr, which
// leaves entities alone: escaped, "<b>" shows as written instead of vanishing. The title is HTML.
const altTextOf = (image: ImageFile) => htmlText(image.alt);

const toUploaded = (item: MediaItem, uploaded: boolean): UploadedMedia => ({ id: item.id, sourceUrl: item.source_url, altText: item.alt_text, uploaded, postId: item.post ?? 0 });

/** Media items already in the library under these slugs, by slug. */
async function mediaBySlug(rest: WordPressRest, slugs: readonly string[]): Promise<Map<string, MediaItem>> {
  if (slugs.length === 0) return new Map();
  const { data } = await rest.call<MediaItem[]>("wp/v2/media", { query: { slug: slugs, per_page: 100, context: "edit", _fields: MEDIA_FIELDS } });
  return new Map(data.map((item) => [item.slug, item]));
}

/** Uploads one image (always a new media item) with its alt text; `postId` attaches it to a post. */
export async function uploadImage(rest: WordPressRest, image: ImageFile, options: { slug?: string; postId?: number } = {}): Promise<UploadedMedia> {
  const { name } = fileNameOf(image);
  const { data } = await rest.call<MediaItem>("wp/v2/media", {
    method: "POST",
    // With a raw body, WordPress takes the item's fields from the query.
    query: { alt_text: altTextOf(image), title: htmlText(image.title ?? image.alt), slug: options.slug, post: options.postId, context: "edit", _fields: MEDIA_FIELDS },
    body: image.bytes.slice(),
    headers: { "content-type": image.contentType, "content-disposition": `attachment; filename="${name}"` },
    timeoutMs: 120_000,
  });
  return toUploaded(data, true);
}

/**
 * Each image in the library, by its key in `images`: the one already there when the same bytes
 * went up before under the same name (its alt text brought up to date), else a new upload.
 */
export async function ensureImages<K>(rest: WordPressRest, images: ReadonlyMap<K, ImageFile>, postId?: number): Promise<Map<K, UploadedMedia>> {
  const slugs = new Map([...images].map(([key, image]) => [key, mediaSlugOf(image)]));
  const existing = await mediaBySlug(rest, [...new Set(slugs.values())]);
  const out = new Map<K, UploadedMedia>();
  for (const [key, image] of images) {
    const slug = slugs.get(key)!;
    let item = existing.get(slug);
    if (!item) {
      const uploaded = await uploadImage(rest, image, { slug, postId });
      existing.set(slug, { id: uploaded.id, slug, source_url: uploaded.sourceUrl, alt_text: uploaded.altText, post: uploaded.postId });
      out.set(key, uploaded);
      continue;
    }
    if (item.alt_text !== altTextOf(image)) {
      const { data } = await rest.call<MediaItem>(`wp/v2/media/${item.id}`, { method: "POST", json: { alt_text: altTextOf(image) }, query: { context: "edit", _fields: MEDIA_FIELDS } });
      item = data;
      existing.set(slug, data);
    }
    out.set(key, toUploaded(item, false));
  }
  return out;
}

/** Attaches media items to a post (the library's "Uploaded to"), leaving those attached elsewhere alone. */
export async function attachToPost(rest: WordPressRest, media: Iterable<UploadedMedia>, postId: number): Promise<void> {
  const loose = new Map<number, UploadedMedia>();
  for (const item of media) if (!item.postId) loose.set(item.id, item);
  for (const item of loose.values()) {
    await rest.call(`wp/v2/media/${item.id}`, { method: "POST", json: { post: postId }, query: { _fields: "id" } });
    item.postId = postId;
  }
}
