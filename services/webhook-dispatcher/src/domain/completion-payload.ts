// The completion webhook's body (spec 6): { success, data, content, seo }. content.html and
// content.markdown are always the article's body itself, unwrapped from a JSON envelope
// ({"article": {"content": …}}) when the workflow produced one. `data` is the article exactly as
// the public API presents it, by the gateway's own presenter, so the two can never drift apart.
import { Marked } from "marked";
import sanitizeHtml from "sanitize-html";
import type { Article, ArticleImage } from "../../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { envelopeOf, parseJsonDocument } from "../../../kit/src/article-envelope.ts";
import { presentArticle, type PresentedArticle, type ProjectRef } from "../../../kit/src/public-article.ts";

export interface ArticleBody {
  /** "json" when the stored content is a JSON document (an envelope), else "markdown". */
  format: "json" | "markdown";
  markdown: string;
  metaTitle?: string;
  metaDescription?: string;
}

const asText = (value: unknown) => (typeof value === "string" ? value : undefined);

/** The body of stored content: a JSON envelope's article.content, else the content as written. */
export function unwrapBody(content: string): ArticleBody {
  const envelope = envelopeOf(content);
  if (envelope) return { format: "json", markdown: envelope.body, metaTitle: asText(envelope.article.meta_title), metaDescription: asText(envelope.article.meta_description) };
  // Another JSON document is still JSON, passed on whole.
  return { format: parseJsonDocument(content) === undefined ? "markdown" : "json", markdown: content };
}

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

export interface CompletionPayload {
  success: true;
  data: PresentedArticle;
  content: { format: string; html: string; markdown: string; meta_title: string; meta_description: string };
  seo: {
    target_keyword: string | null;
    keywords: string[];
    language: string;
    country_targeting: string | null;
    word_count: number;
    ai_detection_score: number | null;
  };
}

export function completionPayload(article: Article, project: ProjectRef): CompletionPayload {
  const body = unwrapBody(article.content ?? "");
  return {
    success: true,
    data: presentArticle(article, project),
    content: {
      format: body.format,
      html: renderHtml(body.markdown, article.images),
      markdown: body.markdown,
      meta_title: body.metaTitle ?? article.title,
      meta_description: body.metaDescription ?? article.description ?? "",
    },
    seo: {
      target_keyword: article.targetKeyword ?? null,
      keywords: [...article.keywords],
      language: article.language,
      country_targeting: article.countryTargeting ?? null,
      word_count: article.actualWordCount,
      ai_detection_score: article.aiDetectionScore ?? null,
    },
  };
}
