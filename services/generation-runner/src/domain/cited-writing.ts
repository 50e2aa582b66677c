// Citations in the article's text, on request only: an article created with
// citations "inline" or "list" has its writing steps told to cite the numbered sources, and its
// finished text resolved against them (citations.ts). With "none" nothing here changes a prompt
// or a text, so such an article's content is what it was before citations existed.
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ArticleSourceSchema } from "../../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import type { SnapshotStep } from "../../../../proto/gen/articles/workflow_catalog/v1/snapshots_pb.ts";
import { CITATION_STYLES, citationInstruction, keepCitationsInstruction, numberedSources, plainText, resolveCitations, type CitableSource, type CitationStyle } from "../../../kit/src/rules/citations.ts";
import { envelopeOf } from "../../../kit/src/article-envelope.ts";
import { countWords } from "../../../kit/src/words.ts";
import type { StoredResearch } from "./checkpoints.ts";
import { wordCountOf } from "./step-values.ts";

/** The article's style; anything unknown (an article stored before citations) is "none". */
export const citationStyleOf = (stored: string | undefined): CitationStyle =>
  (CITATION_STYLES as readonly string[]).includes(stored ?? "") ? (stored as CitationStyle) : "none";

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return "";
  }
}

/**
 * The research's sources as the text cites them. A checkpoint from before sources were shown has
 * no site name (the host stands in) and a title kept as extracted, made plain here.
 */
export const citableSources = (research: StoredResearch | undefined): CitableSource[] =>
  (research?.sources ?? []).map((s) => ({ number: s.index, url: s.url, title: plainText(s.title) || s.url, siteName: s.siteName || hostOf(s.url) }));

/** {sources}: the numbered list of pages read, one line each ("" without research). */
export const sourcesText = (research: StoredResearch | undefined): string => numberedSources(citableSources(research));

/**
 * Steps whose output is article text a reader sees: the built-in draft and final polish, and a
 * custom workflow's last step (its output is the content). Research notes, outlines and meta
 * descriptions keep their prompts.
 */
export function writesArticleText(step: SnapshotStep, steps: readonly SnapshotStep[]): boolean {
  if (step.role) return step.role === "draft" || step.role === "polish";
  return step === steps[steps.length - 1];
}

/** What a humanize pass is told so the citations survive its rewrite; undefined without citations. */
export function humanizeCitationNote(style: CitationStyle, research: StoredResearch | undefined): string | undefined {
  const sources = citableSources(research);
  return style === "none" || sources.length === 0 ? undefined : keepCitationsInstruction(sources);
}

/** A writing step's user prompt with the citation instruction after it, when the article asked for citations. */
export function promptWithCitations(user: string, style: CitationStyle, research: StoredResearch | undefined): string {
  const sources = citableSources(research);
  if (style === "none" || sources.length === 0) return user;
  return `${user}\n\n${citationInstruction(sources)}`;
}

export interface CitedText {
  content: string;
  /**
   * The article's words (actual_word_count, and what is settled against the quota): those of the
   * text a reader reads, so citing adds its markers alone, never the Sources section or a link's address.
   */
  words: number;
  /** Every source read, with whether content cites it. */
  sources: MessageInitShape<typeof ArticleSourceSchema>[];
  removed: number;
}

/**
 * The text as the article stores it: citations resolved for its style (a JSON envelope's body
 * only), and the sources numbered with whether the text cites them. "none" leaves the text as
 * written, and cites nothing.
 */
export function citedText(content: string, style: CitationStyle, research: StoredResearch | undefined): CitedText {
  const citable = citableSources(research);
  const envelope = envelopeOf(content);
  const resolved = resolveCitations(envelope?.body ?? content, citable, citable.length > 0 ? style : "none");
  const unchanged = style === "none" || citable.length === 0;
  const text = unchanged ? content : envelope ? JSON.stringify({ ...envelope.document, article: { ...envelope.article, content: resolved.content } }) : resolved.content;
  const cited = new Set(resolved.cited);
  const fetchedAt = new Map((research?.sources ?? []).map((s) => [s.index, s.fetchedAt]));
  return {
    content: text,
    words: unchanged ? wordCountOf(content) : countWords(resolved.readText),
    sources: citable.map((s) => ({ ...s, fetchedAt: timestampFromDate(new Date(fetchedAt.get(s.number)!)), cited: cited.has(s.number) })),
    removed: resolved.removed,
  };
}
