// An article body's markdown as HTML: rendered by marked (GFM), then sanitised, since the body is
// model output (or a client's edit) and must not carry script. One rendering for the completion
// webhook's content.html, the posts published to WordPress and Ghost, and the gateway's export.
import { Marked } from "marked";
import sanitizeHtml from "sanitize-html";
import type { ArticleImage } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";

// Private instances, so no other module's marked options leak into webhook rendering.
const markdown = new Marked({ gfm: true, async: false });
// marked tries its setext-heading rule (text underlined by a line of = or -) at every block, and
// that one regular expression was most of the cost of a payload. A body with no line that could
// underline anything, even inside quotes or lists, holds no such heading, and without the rule it
// parses to the same HTML (answering undefined means "not here"; false would fall back to the rule).
const withoutSetextHeadings = new Marked({ gfm: true, async: false }, { tokenizer: { lheading: () => undefined } });
const UNDERLINE = /^[ \t>]*(?:=+|-+)[ \t]*$/m;

/** Markdown to (unsanitised) HTML, as marked with GFM renders it. */
export function parseMarkdown(body: string): string {
  return (UNDERLINE.test(body) ? markdown : withoutSetextHeadings).parse(body) as string;
}

const SANITIZE: sanitizeHtml.IOptions = {
  allowedTags: [...sanitizeHtml.defaults.allowedTags, "img", "h1", "h2"],
  allowedAttributes: { a: ["href", "title"], img: ["src", "alt", "title", "width", "height"], th: ["align"], td: ["align"], ol: ["start"] },
  allowedSchemes: ["http", "https", "mailto"],
  allowProtocolRelative: false,
};

/** An image of the article: its URL and its size in pixels. */
export type SizedImage = Pick<ArticleImage, "url" | "width" | "height">;

/**
 * Markdown to HTML with marked, then sanitised: the body is model output and must not carry
 * script. The article's own images get their width and height, so a page lays out before they load.
 */
export function renderHtml(body: string, images: readonly SizedImage[] = []): string {
  const sizes = new Map(images.map((i) => [i.url, i]));
  return sanitizeHtml(parseMarkdown(body), {
    ...SANITIZE,
    transformTags: {
      img: (tagName, attribs) => {
        const image = sizes.get(attribs.src ?? "");
        return { tagName, attribs: image ? { ...attribs, width: String(image.width), height: String(image.height) } : attribs };
      },
    },
  });
}

