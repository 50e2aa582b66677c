// The completion webhook's body (spec 6): { success, data, content, seo }. content.html and
// content.markdown are always the article's body itself, unwrapped from a JSON envelope
// ({"article": {"content": …}}) when the workflow produced one. `data` is the article exactly as
// the public API presents it, by the gateway's own presenter, so the two can never drift apart.
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

// One rendering of a body as HTML, shared with the gateway's export (GET /v1/articles/{id}/content).
export { parseMarkdown, renderHtml, type SizedImage } from "../../../kit/src/markdown-html.ts";
import { renderHtml } from "../../../kit/src/markdown-html.ts";

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
