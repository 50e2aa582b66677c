// GET /images/{id}.{ext}: an article image at its stable public URL. No API key, so a CMS or a
// browser can load what the article's content links to; the id (128 random bits) is what keeps
// an image private to whoever holds the article. The bytes come from generation-runner's
// ArticleImageService; an image never changes, so it is cached for a year as immutable.
import { Elysia } from "elysia";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { ArticleImageService } from "../../../proto/gen/articles/generation_runner/v1/images_pb.ts";
import { notFoundError } from "../errors.ts";

const IMAGE_FILE = /^([0-9a-f]{32})\.([a-z]{3,4})$/;
const IMMUTABLE = "public, max-age=31536000, immutable";

/** Whether an If-None-Match header names the image's ETag (or any). */
const matches = (ifNoneMatch: string | null, etag: string) =>
  ifNoneMatch !== null && ifNoneMatch.split(",").some((tag) => ["*", etag, `W/${etag}`].includes(tag.trim()));

export const imageRoutes = (images: Client<typeof ArticleImageService>) => {
  async function answer(file: string, request: Request): Promise<Response> {
    const name = IMAGE_FILE.exec(file);
    if (!name) throw notFoundError("Image not found.");
    let image;
    try {
      image = await images.getImage({ imageId: name[1]! });
    } catch (error) {
      if (error instanceof ConnectError && error.code === Code.NotFound) throw notFoundError("Image not found.");
      throw error;
    }
    // The extension is part of the URL the article gave out; another one is not that image.
    if (image.extension !== name[2]) throw notFoundError("Image not found.");
    const etag = `"${image.sha256}"`;
    const headers = { etag, "cache-control": IMMUTABLE, "x-content-type-options": "nosniff" };
    if (matches(request.headers.get("if-none-match"), etag)) return new Response(null, { status: 304, headers });
    const described = { ...headers, "content-type": image.mediaType, "content-length": String(image.data.length) };
    return new Response(request.method === "HEAD" ? null : (image.data as Uint8Array<ArrayBuffer>), { headers: described });
  }
  const detail = { summary: "An article image by the URL its content links to (no API key)", tags: ["Images"] };
  return new Elysia({ name: "image-routes" })
    .get("/images/:file", ({ params, request }) => answer(params.file, request), { detail })
    .head("/images/:file", ({ params, request }) => answer(params.file, request), { detail: { ...detail, hide: true } });
};
