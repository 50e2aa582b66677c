// Some workflows return the article wrapped in a JSON envelope with the body at article.content
// (spec 2.2). One reading of it, for the runner (word counts, description, humanize) and the
// completion webhook (unwrapped html and markdown).

export const isJsonObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** The value of a text that is one whole JSON document, else undefined (markdown may open with a brace). */
export function parseJsonDocument(text: string): unknown {
  const trimmed = text.trim();
  if (!trimmed.startsWith("{") && !trimmed.startsWith("[")) return undefined;
  try {
    return JSON.parse(trimmed);
  } catch {
    return undefined;
  }
}

export interface ArticleEnvelope {
  /** The body at article.content. */
  body: string;
  /** The envelope's article object (content, and e.g. meta_title, meta_description). */
  article: Record<string, unknown>;
  /** The whole envelope document. */
  document: Record<string, unknown>;
}

/** The envelope of stored content, or null when the content is not one. */
export function envelopeOf(content: string): ArticleEnvelope | null {
  const document = parseJsonDocument(content);
  if (!isJsonObject(document) || !isJsonObject(document.article) || typeof document.article.content !== "string") return null;
  return { body: document.article.content, article: document.article, document };
}

/** The article body a reader sees: the envelope's article.content, else the content itself. */
export const bodyOf = (content: string): string => envelopeOf(content)?.body ?? content;
