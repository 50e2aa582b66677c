// The WordPress publishing client against a real WordPress (Debian's, served by php -S on a
// database of its own): connecting, publishing an article with its images and terms, publishing
// it again, and a retried job. What landed is checked through WordPress's own REST API.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { deflateSync } from "node:zlib";
import { articleHtml } from "../../services/webhook-dispatcher/src/publishing/article-html.ts";
import { articleMarker, wordPressClient, WordPressError, type ArticleImageFile, type ArticlePost } from "../../services/webhook-dispatcher/src/publishing/wordpress.ts";
import { freePort } from "../harness/ports.ts";
import { startWordPress, type WordPressSite } from "../harness/wordpress.ts";

let site: WordPressSite;
let prettySite: WordPressSite;

beforeAll(async () => {
  [site, prettySite] = await Promise.all([startWordPress(), startWordPress({ permalinks: "pretty" })]);
}, 60_000);

afterAll(async () => {
  await Promise.all([site?.stop(), prettySite?.stop()]);
});

const clientOf = (s: WordPressSite, applicationPassword = s.applicationPassword, fetchFn?: typeof fetch) =>
  wordPressClient({ siteUrl: s.url, username: s.username, applicationPassword, fetch: fetchFn });

/** WordPress's own REST API, as the site's administrator: what a user would look at. */
async function wp(s: WordPressSite, route: string, query: Record<string, string | number> = {}): Promise<{ data: any; total: number }> {
  const url = new URL(s.restRoot);
  if (url.searchParams.has("rest_route")) url.searchParams.set("rest_route", `/${route}`);
  else url.pathname += route;
  for (const [k, v] of Object.entries(query)) url.searchParams.set(k, String(v));
  const response = await fetch(url, { headers: { authorization: `Basic ${btoa(`${s.username}:${s.applicationPassword}`)}` } });
  expect(response.status).toBe(200);
  return { data: await response.json(), total: Number(response.headers.get("x-wp-total")) };
}

/** The posts (any status but trash) that carry an article's marker. */
const postsOf = async (s: WordPressSite, articleKey: string) =>
  (await wp(s, "wp/v2/posts", { status: "any", context: "edit", per_page: 100 })).data.filter((p: any) => p.content.raw.includes(articleMarker(articleKey)));

// A real PNG of one colour: signature, IHDR, one IDAT, IEND.
function png(width: number, height: number, [r, g, b]: [number, number, number]): Uint8Array {
  const chunk = (type: string, data: Uint8Array) => {
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    out.write(type, 4, "ascii");
    Buffer.from(data).copy(out, 8);
    out.writeUInt32BE(Bun.hash.crc32(out.subarray(4, 8 + data.length)) >>> 0, 8 + data.length);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: width }, () => [r, g, b]).flat())]);
  const pixels = deflateSync(Buffer.concat(Array.from({ length: height }, () => row)));
  return new Uint8Array(Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk("IHDR", header), chunk("IDAT", pixels), chunk("IEND", new Uint8Array())]));
}

const images: ArticleImageFile[] = [
  { url: "https://articles.example/images/0a1b2c3d4e5f60718293a4b5c6d7e8f9.png", bytes: png(16, 9, [120, 72, 40]), contentType: "image/png", filename: "espresso-at-home-1.png", alt: "A shot of espresso with thick crema" },
  { url: "https://articles.example/images/ffeeddccbbaa99887766554433221100.png", bytes: png(12, 12, [30, 90, 160]), contentType: "image/png", filename: "espresso-at-home-2.png", alt: "A burr grinder beside a scale" },
];

const markdown = `# Espresso at home

Good espresso needs *fresh beans*, a **fine grind** and patience.
It also needs a [decent grinder](https://grinders.example/guide).

![${images[0]!.alt}](${images[0]!.url})

## Key takeaways

- Weigh the dose
- Time the shot

## Pulling the shot

1. Grind 18 g of coffee.
2. Tamp evenly.
3. Brew for 28 seconds.

| Dose | Yield | Time |
| --- | --- | --- |
| 18 g | 36 g | 28 s |

> Taste, then adjust the grind.

![${images[1]!.alt}](${images[1]!.url})

\`\`\`
ratio = yield / dose
\`\`\`

## FAQ

### Why does my espresso taste sour?

The shot ran too fast: grind finer.
`;

const article = (overrides: Partial<ArticlePost> = {}): ArticlePost => ({
  articleKey: "1001",
  title: "Espresso at home",
  html: articleHtml(markdown, images.map((i, n) => ({ url: i.url, width: [16, 12][n]!, height: [9, 12][n]! }))).html,
  excerpt: "How to pull a good espresso shot at home.",
  slug: "espresso-at-home",
  status: "publish",
  categories: ["Coffee", "Guides & How-tos"],
  tags: ["espresso", "home barista"],
  images,
  ...overrides,
});

describe("connecting to a WordPress site", () => {
  test("the right application password: the REST API is found and the user may write, publish and upload", async () => {
    const check = await clientOf(site).checkConnection();
    expect(check.ok).toBe(true);
    expect(check.restRoot).toBe(site.restRoot);
    expect(check.restRoot).toContain("rest_route=");
    expect(check.user?.name).toBe(site.username);
    expect(check.user?.roles).toContain("administrator");
    expect(check.can).toEqual({ createPosts: true, publishPosts: true, uploadFiles: true, createTerms: true });
    expect(check.problems).toEqual([]);
  });

  test("a wrong application password is a permanent 401 that never repeats the password", async () => {
    const wrong = "Xq7w Pz3k Lm9n Rt2v Hb5c Yd8f";
    const check = await clientOf(site, wrong).checkConnection();
    expect(check.ok).toBe(false);
    expect(check.error).toBeInstanceOf(WordPressError);
    expect(check.error).toMatchObject({ status: 401, retryable: false });
    expect(check.problems).toEqual(["WordPress rejected the username or application password."]);

    const failed = await clientOf(site, wrong).publishPost(article({ articleKey: "never" })).catch((e) => e);
    expect(failed).toBeInstanceOf(WordPressError);
    expect(failed).toMatchObject({ status: 401, retryable: false });
    for (const said of [JSON.stringify(check), JSON.stringify(failed), failed.message, String(failed.stack)]) {
      expect(said).not.toContain(wrong);
      expect(said).not.toContain(wrong.replaceAll(" ", ""));
      expect(said).not.toContain(btoa(`${site.username}:${wrong}`));
    }
  });

  test("a site that does not answer is a retryable network error", async () => {
    const check = await wordPressClient({ siteUrl: `http://127.0.0.1:${await freePort()}`, username: "x", applicationPassword: "secret pass word" }).checkConnection();
    expect(check.ok).toBe(false);
    expect(check.error).toMatchObject({ retryable: true, code: "network" });
  });

  test("429 with Retry-After is retryable after the delay the site asks for", async () => {
    const busy = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("slow down", { status: 429, headers: { "retry-after": "7" } }) });
    try {
      const check = await wordPressClient({ siteUrl: `http://127.0.0.1:${busy.port}`, username: "x", applicationPassword: "y" }).checkConnection();
      expect(check.error).toMatchObject({ status: 429, retryable: true, retryAfterMs: 7_000 });
    } finally {
      busy.stop(true);
    }
  });

  test("a request WordPress refuses is permanent and keeps WordPress's code and message", async () => {
    const failed = await clientOf(site).publishPost(article({ articleKey: "bad-author", slug: "bad-author", images: [], author: 424242 })).catch((e) => e);
    expect(failed).toBeInstanceOf(WordPressError);
    expect(failed).toMatchObject({ status: 400, retryable: false, code: "rest_invalid_author" });
    expect(failed.message).toContain("rest_invalid_author");
  });
});

describe("publishing an article", () => {
  let postId: number;

  test("the post has the article's HTML, excerpt, slug, terms by name, and its images in the media library", async () => {
    const published = await clientOf(site).publishPost(article());
    expect(published.created).toBe(true);
    postId = published.id;

    const { data: post } = await wp(site, `wp/v2/posts/${postId}`, { context: "edit" });
    expect(post.status).toBe("publish");
    expect(post.slug).toBe("espresso-at-home");
    expect(post.title.raw).toBe("Espresso at home");
    expect(post.excerpt.raw).toBe("How to pull a good espresso shot at home.");
    const content: string = post.content.raw;
    // HTML, not markdown; the title heading left to WordPress.
    expect(content).not.toContain("<h1");
    expect(content).toContain('<h2 id="pulling-the-shot">Pulling the shot</h2>');
    expect(content).toMatch(/<ol>\s*<li>Grind 18 g of coffee.<\/li>/);
    expect(content).toMatch(/<table>[\s\S]*<th>Dose<\/th>[\s\S]*<td>28 s<\/td>[\s\S]*<\/table>/);
    expect(content).toContain("<blockquote>");
    expect(content).toContain("<pre><code>ratio = yield / dose");
    expect(content).toContain('<a href="https://grinders.example/guide">decent grinder</a>');
    expect(content).toContain("<em>fresh beans</em>, a <strong>fine grind</strong> and patience. It also needs");
    expect(content).toMatch(/<section class="key-takeaways"><h2 id="key-takeaways">Key takeaways<\/h2>\s*<ul>/);
    expect(content).toMatch(/<section class="faq"><h2 id="faq">FAQ<\/h2>\s*<h3 id="why-does-my-espresso-taste-sour">/);
    for (const markup of ["## ", "**", "| Dose", "![", "](http"]) expect(content).not.toContain(markup);

    const { data: categories } = await wp(site, "wp/v2/categories", { include: post.categories.join(",") });
    expect(categories.map((c: any) => c.name).sort()).toEqual(["Coffee", "Guides &amp; How-tos"]);
    const { data: tags } = await wp(site, "wp/v2/tags", { include: post.tags.join(",") });
    expect(tags.map((t: any) => t.name).sort()).toEqual(["espresso", "home barista"]);

    const { data: media } = await wp(site, "wp/v2/media", { parent: postId, context: "edit", orderby: "id", order: "asc" });
    expect(media.map((m: any) => m.alt_text)).toEqual(images.map((i) => i.alt));
    expect(media.map((m: any) => m.mime_type)).toEqual(["image/png", "image/png"]);
    expect(post.featured_media).toBe(media[0].id);
    expect(published.featuredMediaId).toBe(media[0].id);
    // The body shows the site's copies, which the site serves.
    expect(content).not.toContain("articles.example");
    for (const m of media) {
      expect(content).toContain(`src="${m.source_url}"`);
      expect(content).toContain(`wp-image-${m.id}`);
      const file = await fetch(m.source_url);
      expect(file.headers.get("content-type")).toContain("image/png");
      expect(Bun.hash(await file.arrayBuffer())).toBe(Bun.hash(images[media.indexOf(m)]!.bytes));
    }
    // What a reader gets: HTML through WordPress's own rendering.
    const rendered = (await wp(site, `wp/v2/posts/${postId}`)).data.content.rendered;
    expect(rendered).toContain("<table>");
    // The marker stays hidden: no empty paragraph around it, no <br> from soft line breaks.
    expect(rendered).toContain(articleMarker("1001"));
    expect(rendered).not.toMatch(/<p>\s*<!--[^>]*-->\s*<\/p>/);
    expect(rendered).not.toContain("<br");
    expect(rendered).toContain(media[1].source_url);
  });

  test("publishing again updates the same post, with no second post and no second copy of the images", async () => {
    const mediaBefore = (await wp(site, "wp/v2/media", { per_page: 100 })).total;
    const changed = article({ title: "Espresso at home, revised", html: articleHtml(`${markdown}\n## Cleaning\n\nBackflush weekly.\n`).html, tags: ["espresso", "cleaning"] });
    const again = await clientOf(site).publishPost(changed);
    expect(again.created).toBe(false);
    expect(again.id).toBe(postId);

    const { data: post } = await wp(site, `wp/v2/posts/${postId}`, { context: "edit" });
    expect(post.title.raw).toBe("Espresso at home, revised");
    expect(post.content.raw).toContain('<h2 id="cleaning">Cleaning</h2>');
    const { data: tags } = await wp(site, "wp/v2/tags", { include: post.tags.join(",") });
    expect(tags.map((t: any) => t.name).sort()).toEqual(["cleaning", "espresso"]);
    expect(await postsOf(site, "1001")).toHaveLength(1);
    expect((await wp(site, "wp/v2/media", { per_page: 100 })).total).toBe(mediaBefore);

    // A new slug too: the marker still finds the post.
    const renamed = await clientOf(site).publishPost({ ...changed, slug: "espresso-at-home-guide" });
    expect(renamed.id).toBe(postId);
    expect(renamed.slug).toBe("espresso-at-home-guide");
    expect(await postsOf(site, "1001")).toHaveLength(1);
  });

  test("a job retried after WordPress accepted the post (its answer lost) still leaves one post", async () => {
    const scheduled = article({ articleKey: "1002", slug: "espresso-scheduled", status: "future", date: new Date("2031-03-04T05:06:07Z") });
    // The first attempt: WordPress creates the post, then the connection drops before the answer arrives.
    const answerLost: typeof fetch = Object.assign(
      async (input: string | URL | Request, init?: RequestInit) => {
        const response = await fetch(input, init);
        const url = new URL(input instanceof Request ? input.url : String(input));
        const route = url.searchParams.get("rest_route") ?? url.pathname;
        if (init?.method === "POST" && route.endsWith("/wp/v2/posts")) throw new TypeError("socket hang up");
        return response;
      },
      { preconnect: fetch.preconnect },
    );
    const lost = await clientOf(site, site.applicationPassword, answerLost).publishPost(scheduled).catch((e) => e);
    expect(lost).toBeInstanceOf(WordPressError);
    expect(lost).toMatchObject({ retryable: true, code: "network" });
    expect(await postsOf(site, "1002")).toHaveLength(1);

    // The retry: a new client, knowing nothing of the first attempt.
    const retried = await clientOf(site).publishPost(scheduled);
    expect(retried.created).toBe(false);
    const posts = await postsOf(site, "1002");
    expect(posts).toHaveLength(1);
    expect(posts[0].id).toBe(retried.id);
    expect(posts[0].status).toBe("future");
    expect(posts[0].date_gmt).toBe("2031-03-04T05:06:07");
    expect(posts[0].featured_media).toBeGreaterThan(0);
  });
});

describe("a site with pretty permalinks", () => {
  test("the REST API is found under /wp-json/ and an article publishes there too", async () => {
    const client = clientOf(prettySite);
    const check = await client.checkConnection();
    expect(check.ok).toBe(true);
    expect(check.restRoot).toBe(`${prettySite.url}/wp-json/`);

    const published = await client.publishPost(article({ articleKey: "2001" }));
    const { data: post } = await wp(prettySite, `wp/v2/posts/${published.id}`, { context: "edit" });
    expect(post.link).toBe(`${prettySite.url}/espresso-at-home/`);
    expect(post.content.raw).toContain("<table>");
    expect(post.featured_media).toBe(published.media.get(images[0]!.url)!.id);
  });
});
