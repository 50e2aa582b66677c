// GET /v1/articles/{id}/content?format=…: the current version's body in the form a client puts on
// a page. markdown is the body as stored (a JSON envelope's article.content); html is the
// completion webhook's content.html, rendered and sanitised by the same code; text is that HTML's
// words with one blank line between blocks; jsonld is schema.org structured data: an Article
// (headline, description, dates, images, keywords, the cited sources) and, when the body has an
// FAQ section, a FAQPage of its questions and answers.
import { parseHTML } from "linkedom";
import type { Article } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { bodyOf } from "../../../services/kit/src/article-envelope.ts";
import { renderHtml } from "../../../services/kit/src/markdown-html.ts";
import { iso } from "../../../services/kit/src/public-article.ts";
import { HttpError, validationError } from "../errors.ts";
import { articleEtag } from "./article-versions.ts";

export const EXPORT_FORMATS = ["markdown", "html", "text", "jsonld"] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

const CONTENT_TYPES: Record<ExportFormat, string> = {
  markdown: "text/markdown; charset=utf-8",
  html: "text/html; charset=utf-8",
  text: "text/plain; charset=utf-8",
  jsonld: "application/ld+json; charset=utf-8",
};

export interface ExportedContent {
  /** The article's ETag: the version exported. */
  etag?: string;
  format: ExportFormat;
  contentType: string;
  content: string;
}

/** The format asked for: markdown when absent; 422 for anything else than the four. */
export function exportFormatOf(value: string | null | undefined): ExportFormat {
  if (value === undefined || value === null || value === "") return "markdown";
  if ((EXPORT_FORMATS as readonly string[]).includes(value)) return value as ExportFormat;
  throw validationError({ format: [`The selected format is invalid. Allowed: ${EXPORT_FORMATS.join(", ")}.`] });
}

// The FAQ heading the writing prompts ask for, as publishing recognises it (webhook-dispatcher's article-html.ts).
const FAQ_HEADING = /^(faqs?|frequently asked questions|questions and answers)\s*:?$/i;
const HEADING = /^H[1-6]$/;
const BLOCKS = new Set(["P", "H1", "H2", "H3", "H4", "H5", "H6", "UL", "OL", "BLOCKQUOTE", "PRE", "TABLE", "HR", "DIV"]);

const textOf = (node: { textContent: string | null }) => (node.textContent ?? "").replace(/\s+/g, " ").trim();

/** The rendered body as a document's element children. */
function blocksOf(html: string): Element[] {
  const { document } = parseHTML(`<!doctype html><html><head></head><body>${html}</body></html>`);
  return [...document.body.children];
}

/** Plain text: each block's words on its own paragraph, list items one a line. */
function plainText(blocks: Element[]): string {
  const paragraphs: string[] = [];
  for (const block of blocks) {
    if (block.tagName === "UL" || block.tagName === "OL") {
      paragraphs.push([...block.children].map((li, i) => `${block.tagName === "OL" ? `${i + 1}.` : "-"} ${textOf(li)}`).join("\n"));
    } else if (block.tagName === "PRE") {
      paragraphs.push((block.textContent ?? "").replace(/\n+$/, ""));
    } else if (BLOCKS.has(block.tagName) || textOf(block) !== "") {
      const text = textOf(block);
      if (text !== "") paragraphs.push(text);
    }
  }
  return `${paragraphs.join("\n\n")}\n`;
}

export interface FaqEntry {
  question: string;
  answer: string;
}

/**
 * The questions and answers of the body's FAQ section: under its heading, each subheading (or a
 * paragraph that is a bold question) is a question and the paragraphs after it its answer.
 */
export function faqOf(blocks: Element[]): FaqEntry[] {
  const start = blocks.findIndex((b) => HEADING.test(b.tagName) && FAQ_HEADING.test(textOf(b)));
  if (start < 0) return [];
  const level = Number(blocks[start]!.tagName[1]);
  const entries: FaqEntry[] = [];
  let current: { question: string; answer: string[] } | undefined;
  const close = () => {
    if (current && current.answer.length > 0) entries.push({ question: current.question, answer: current.answer.join(" ") });
    current = undefined;
  };
  for (const block of blocks.slice(start + 1)) {
    const isHeading = HEADING.test(block.tagName);
    if (isHeading && Number(block.tagName[1]) <= level) break;
    const boldQuestion = block.tagName === "P" && block.children.length === 1 && /^(STRONG|B)$/.test(block.children[0]!.tagName) && textOf(block) === textOf(block.children[0]!) && textOf(block).endsWith("?");
    if (isHeading || boldQuestion) {
      close();
      current = { question: textOf(block), answer: [] };
    } else if (current) {
      const text = textOf(block);
      if (text !== "") current.answer.push(text);
    }
  }
  close();
  return entries;
}

/** schema.org Article (and FAQPage) of the article, as JSON-LD. */
function jsonLd(article: Article, blocks: Element[]): Record<string, unknown> {
  const h1 = blocks.find((b) => b.tagName === "H1");
  const keywords = [...new Set([article.targetKeyword, ...article.keywords].filter((k): k is string => Boolean(k)))];
  const cited = article.sources.filter((s) => s.cited);
  const articleNode: Record<string, unknown> = {
    "@type": "Article",
    "@id": `urn:uuid:${article.externalId}`,
    headline: h1 ? textOf(h1) : article.title,
    name: article.title,
    ...(article.description ? { description: article.description } : {}),
    inLanguage: article.language,
    dateCreated: iso(article.createdAt),
    datePublished: iso(article.createdAt),
    dateModified: iso(article.updatedAt),
    wordCount: article.actualWordCount,
    ...(keywords.length > 0 ? { keywords } : {}),
    ...(article.images.length > 0
      ? { image: article.images.map((i) => ({ "@type": "ImageObject", url: i.url, width: i.width, height: i.height, ...(i.alt ? { caption: i.alt } : {}) })) }
      : {}),
    ...(cited.length > 0 ? { citation: cited.map((s) => ({ "@type": "CreativeWork", name: s.title, url: s.url, ...(s.siteName ? { publisher: { "@type": "Organization", name: s.siteName } } : {}) })) } : {}),
  };
  const faq = faqOf(blocks);
  const graph: Record<string, unknown>[] = [articleNode];
  if (faq.length > 0) {
    graph.push({
      "@type": "FAQPage",
      "@id": `urn:uuid:${article.externalId}#faq`,
      mainEntity: faq.map((e) => ({ "@type": "Question", name: e.question, acceptedAnswer: { "@type": "Answer", text: e.answer } })),
    });
  }
  return { "@context": "https://schema.org", "@graph": graph };
}

/** The article's current content in `format`; 409 for an article with no content yet. */
export function exportArticle(article: Article, format: ExportFormat): ExportedContent {
  if (article.content === undefined) {
    throw new HttpError(409, { message: `The article is ${article.status} and has no content yet.`, current_version_id: null, status: article.status });
  }
  const body = bodyOf(article.content);
  const answer = (content: string) => ({ etag: articleEtag(article), format, contentType: CONTENT_TYPES[format], content });
  if (format === "markdown") return answer(body);
  const html = renderHtml(body, article.images);
  if (format === "html") return answer(html);
  const blocks = blocksOf(html);
  if (format === "text") return answer(plainText(blocks));
  return answer(JSON.stringify(jsonLd(article, blocks)));
}
