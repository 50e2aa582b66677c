// A fake of Ghost's Admin API (Ghost 5), faithful where the publishing client depends on it, kept
// for the faults a real Ghost cannot be made to produce on demand: answering 503 (as Ghost does
// while it migrates or is overloaded) and 429 with a Retry-After (failNext). Everything else is
// tested against a real Ghost (test/harness/ghost.ts, publishing-ghost.test.ts). What the fake
// holds to, from Ghost's documented behaviour: a token per request (`Authorization: Ghost <jwt>`,
// HS256 signed with the hex-decoded secret of the key named by `kid`, audience /admin/, at most
// five minutes of life), JSON bodies wrapped as {posts: [...]}, `?source=html`, tags created by
// name with internal tags ("#…") slugged "hash-…", filter=tag:<slug>, edits refused with 409
// UpdateCollisionError unless they carry the post's current updated_at, images uploaded as
// multipart and served back, errors as {errors: [{message, type}]}, and scheduled posts needing a
// future published_at.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export interface GhostPost {
  id: string;
  uuid: string;
  title: string;
  slug: string;
  html: string;
  status: string;
  url: string;
  custom_excerpt: string | null;
  meta_description: string | null;
  feature_image: string | null;
  feature_image_alt: string | null;
  published_at: string | null;
  updated_at: string;
  tags: { id: string; name: string; slug: string; visibility: "public" | "internal" }[];
}

export interface FakeGhost {
  url: string;
  /** A valid Admin API key of the site's one integration. */
  adminApiKey: string;
  /** The images uploaded, by URL. */
  images: Map<string, { bytes: Uint8Array; contentType: string; ref: string | null }>;
  /** Answers the next `count` authenticated requests with `status` (and Retry-After seconds, when given). */
  failNext(count: number, status: number, retryAfterSeconds?: number): void;
  /** Requests answered, in order ("POST posts/"). */
  requests: string[];
  stop(): void;
}

const hex = (bytes: number) => randomBytes(bytes).toString("hex");
const slugify = (text: string) => text.toLowerCase().replace(/^#/, "hash-").replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "") || "untitled";
const error = (status: number, type: string, message: string, headers: Record<string, string> = {}) =>
  Response.json({ errors: [{ message, type }] }, { status, headers });

function verifyToken(authorization: string | null, keyId: string, secret: string): string | undefined {
  const token = /^Ghost (.+)$/.exec(authorization ?? "")?.[1];
  if (!token) return "Authorization header format is \"Authorization: Ghost [token]\"";
  const [header, payload, signature] = token.split(".");
  if (!header || !payload || !signature) return "Invalid token";
  const h = JSON.parse(Buffer.from(header, "base64url").toString());
  const p = JSON.parse(Buffer.from(payload, "base64url").toString());
  if (h.alg !== "HS256" || h.kid !== keyId) return "Unknown Admin API Key";
  const expected = createHmac("sha256", Buffer.from(secret, "hex")).update(`${header}.${payload}`).digest();
  const given = Buffer.from(signature, "base64url");
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return "Invalid token: invalid signature";
  const now = Math.floor(Date.now() / 1000);
  if (p.aud !== "/admin/") return "Invalid token: jwt audience invalid";
  if (typeof p.exp !== "number" || p.exp <= now || p.exp - p.iat > 300) return "Invalid token: jwt expired or lives too long";
  return undefined;
}

export function startFakeGhost(): FakeGhost {
  const keyId = hex(12);
  const secret = hex(32);
  const posts = new Map<string, GhostPost>();
  const tags = new Map<string, GhostPost["tags"][number]>();
  const images: FakeGhost["images"] = new Map();
  const requests: string[] = [];
  let failures: { count: number; status: number; retryAfter?: number } = { count: 0, status: 0 };

  const tagOf = (name: string) => {
    const slug = slugify(name);
    let tag = tags.get(slug);
    if (!tag) tags.set(slug, (tag = { id: hex(12), name, slug, visibility: name.startsWith("#") ? "internal" : "public" }));
    return tag;
  };

  let base = "";
  const server: ReturnType<typeof Bun.serve> = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request): Promise<Response> {
      const url = new URL(request.url);
      if (request.method === "GET" && url.pathname.startsWith("/content/images/")) {
        const image = images.get(`${base}${url.pathname}`);
        return image ? new Response(new Uint8Array(image.bytes), { headers: { "content-type": image.contentType } }) : new Response("Not Found", { status: 404 });
      }
      const path = url.pathname.replace(/^\/ghost\/api\/admin\//, "");
      if (path === url.pathname) return new Response("<html>Not a Ghost page</html>", { status: 404, headers: { "content-type": "text/html" } });
      requests.push(`${request.method} ${path}`);
      if (path === "site/" && request.method === "GET") return Response.json({ site: { title: "Fake Ghost", url: `${base}/`, version: "5.99" } });

      const refused = verifyToken(request.headers.get("authorization"), keyId, secret);
      if (refused) return error(401, "UnauthorizedError", refused);
      if (failures.count > 0) {
        failures.count--;
        return error(failures.status, failures.status === 429 ? "TooManyRequestsError" : "InternalServerError", "Injected failure", failures.retryAfter ? { "retry-after": String(failures.retryAfter) } : {});
      }

      if (path === "images/upload/" && request.method === "POST") {
        const form = await request.formData();
        const file = form.get("file");
        if (!(file instanceof Blob)) return error(422, "ValidationError", "Please select an image.");
        const name = (file as File).name || "image.png";
        const stored = `${base}/content/images/2026/11/${hex(4)}-${name}`;
        images.set(stored, { bytes: new Uint8Array(await file.arrayBuffer()), contentType: file.type, ref: (form.get("ref") as string | null) ?? null });
        return Response.json({ images: [{ url: stored, ref: form.get("ref") ?? null }] }, { status: 201 });
      }

      if (path === "posts/" && request.method === "GET") {
        const filter = url.searchParams.get("filter");
        const bySlug = filter?.startsWith("tag:") ? filter.slice(4) : undefined;
        const found = [...posts.values()].filter((p) => !bySlug || p.tags.some((t) => t.slug === bySlug));
        return Response.json({ posts: found, meta: { pagination: { total: found.length } } });
      }

      const one = /^posts\/([0-9a-f]{24})\/$/.exec(path);
      if (one && request.method === "GET") {
        const post = posts.get(one[1]!);
        return post ? Response.json({ posts: [post] }) : error(404, "NotFoundError", "Post not found.");
      }

      if ((path === "posts/" && request.method === "POST") || (one && request.method === "PUT")) {
        if (url.searchParams.get("source") !== "html") return error(422, "ValidationError", "html is only read with ?source=html");
        const body = (await request.json()) as { posts?: Record<string, any>[] };
        const input = body.posts?.[0];
        if (!input) return error(422, "ValidationError", "No posts in the request.");
        const before = one ? posts.get(one[1]!) : undefined;
        if (one && !before) return error(404, "NotFoundError", "Post not found.");
        if (before && input.updated_at !== before.updated_at) return error(409, "UpdateCollisionError", "Saving failed! Someone else is editing this post.");
        const title = input.title ?? before?.title;
        if (!title) return error(422, "ValidationError", "Validation (isLength) failed for title");
        const status = input.status ?? before?.status ?? "draft";
        if (!["draft", "published", "scheduled"].includes(status)) return error(422, "ValidationError", `Validation (isIn) failed for status`);
        const publishedAt = input.published_at ?? (status === "published" ? (before?.published_at ?? new Date().toISOString()) : (before?.published_at ?? null));
        if (status === "scheduled" && (!publishedAt || Date.parse(publishedAt) <= Date.now())) return error(422, "ValidationError", "Date must be at least 2 minutes in the future.");
        let slug = input.slug ?? before?.slug ?? slugify(title);
        for (let n = 2; [...posts.values()].some((p) => p.slug === slug && p.id !== before?.id); n++) slug = `${input.slug ?? slugify(title)}-${n}`;
        const post: GhostPost = {
          id: before?.id ?? hex(12),
          uuid: before?.uuid ?? crypto.randomUUID(),
          title,
          slug,
          html: input.html ?? before?.html ?? "",
          status,
          url: `${base}/${slug}/`,
          custom_excerpt: input.custom_excerpt ?? before?.custom_excerpt ?? null,
          meta_description: input.meta_description ?? before?.meta_description ?? null,
          feature_image: input.feature_image !== undefined ? input.feature_image : (before?.feature_image ?? null),
          feature_image_alt: input.feature_image_alt !== undefined ? input.feature_image_alt : (before?.feature_image_alt ?? null),
          published_at: publishedAt,
          // Distinct from the previous value even within one millisecond.
          updated_at: new Date(Math.max(Date.now(), before ? Date.parse(before.updated_at) + 1 : 0)).toISOString(),
          tags: input.tags ? (input.tags as { name: string }[]).map((t) => tagOf(t.name)) : (before?.tags ?? []),
        };
        posts.set(post.id, post);
        return Response.json({ posts: [post] }, { status: before ? 200 : 201 });
      }
      return error(404, "NotFoundError", "Resource not found");
    },
  });

  base = `http://127.0.0.1:${server.port}`;
  return {
    url: base,
    adminApiKey: `${keyId}:${secret}`,
    images,
    requests,
    failNext(count, status, retryAfterSeconds) {
      failures = { count, status, retryAfter: retryAfterSeconds };
    },
    stop: () => server.stop(true),
  };
}
