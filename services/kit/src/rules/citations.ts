// Citations of research sources in an article's markdown. The writing steps see the
// sources numbered and cite them as [n]; the finished text is then resolved here: a number that
// was a source becomes a link ("inline") or stays a plain marker beside a Sources section
// ("list"), and a number that was not is removed and counted, never shown. Pure functions: the
// gateway accepts the styles named here, the runner resolves with them, the simulator reads the
// instruction with them.

export const CITATION_STYLES = ["none", "inline", "list"] as const;
export type CitationStyle = (typeof CITATION_STYLES)[number];

/** What a citation can point at: the page as fetched. */
export interface CitableSource {
  number: number;
  url: string;
  title: string;
  siteName: string;
}

export interface ResolvedCitations {
  content: string;
  /**
   * The text a reader reads, which the article's words are counted on: the markers plain `[n]`
   * (as in "list"), without link targets or the Sources section. What a citation adds to the
   * count is its marker, one word as the same characters would be in any article.
   */
  readText: string;
  /** Source numbers the text cites after resolution, ascending. */
  cited: number[];
  /** Citations of a number that was not a source, removed. */
  removed: number;
}

/** The heading of the Sources section "list" appends. */
export const SOURCES_HEADING = "## Sources";

/** Opens the instruction the writing steps get when citations are asked for (the simulator looks for it). */
export const CITATION_INSTRUCTION_START = "Citing the numbered sources:";

/**
 * The {sources} text and the list the instruction carries: one line per source,
 * "[n] Title (Site) — URL". Titles and site names are plain text already (plainText).
 */
export function numberedSources(sources: readonly CitableSource[]): string {
  return sources.map((s) => `[${s.number}] ${s.title} (${s.siteName}) — ${s.url}`).join("\n");
}

/**
 * Appended to a writing step's prompt when the article asked for citations: it overrides the
 * built-in prompts' "do not print the bracketed source numbers", and says what may be cited.
 */
export function citationInstruction(sources: readonly CitableSource[]): string {
  return `${CITATION_INSTRUCTION_START}
- Cite the source of a specific fact, figure or quotation with its number in square brackets right after the sentence, such as [2]; combine numbers as [1][3]. This replaces any rule above about leaving source numbers out.
- Cite only these numbers, and only for what that source says; do not cite general knowledge, and leave a sentence uncited rather than guess.
- Do not add a list of sources or links yourself: the sources are listed after the article.
${numberedSources(sources)}`;
}

/** Appended to a rewriting pass's prompt (humanize) when the article asked for citations. */
export function keepCitationsInstruction(sources: readonly CitableSource[]): string {
  return `${CITATION_INSTRUCTION_START}
- Keep every bracketed source number, such as [2] or [1][3], next to the fact it supports; add none and change none.
${numberedSources(sources)}`;
}

/**
 * Text that came from a web page, made plain: tags and control characters gone, whitespace
 * collapsed, at most `max` characters. What a title or site name may be before it reaches a
 * client, a prompt or a post.
 */
export function plainText(text: string, max = 300): string {
  const plain = text
    .replace(/<!--[\s\S]*?-->|<\/?[a-z][^>]*>/gi, " ")
    .replace(/[<>]/g, " ")
    .replace(/[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2066-\u2069]/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return plain.length > max ? `${plain.slice(0, max - 1).trimEnd()}…` : plain;
}

/** Markdown's own characters escaped, so a title shows as written and never becomes markup. */
function markdownLiteral(text: string): string {
  return text.replace(/([\\`*_{}[\]()#+\-.!|<>~&])/g, "\\$1");
}

/** A URL as a markdown link destination: the characters that would end it escaped. */
function linkDestination(url: string): string {
  return url.replace(/[\s()<>\\]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`);
}

/** The Sources section: every source read, by number, its title linked to the page. */
export function sourcesSection(sources: readonly CitableSource[]): string {
  const lines = sources.map((s) => `${s.number}. [${markdownLiteral(s.title)}](${linkDestination(s.url)}) — ${markdownLiteral(s.siteName)}`);
  return `${SOURCES_HEADING}\n\n${lines.join("\n")}\n`;
}

// A run of citations: [n], [n, m] or [n][m], numbers of up to three digits; not a link's text
// ([1](…)), an image's (![…]) or a reference link's label ([x][1]).
const CITATION = /(^|[^\]!\\\w])((?:\[\d{1,3}(?:\s*,\s*\d{1,3})*\])+)(?!\()/g;
// Fenced code keeps its brackets: a code sample's [1] is an index, not a citation.
const FENCE = /^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm;

function outsideCode(text: string, change: (prose: string) => string): string {
  let out = "";
  let at = 0;
  for (const match of text.matchAll(FENCE)) {
    out += change(text.slice(at, match.index)) + match[0];
    at = match.index! + match[0].length;
  }
  return out + change(text.slice(at));
}

/**
 * The markdown with its citations resolved for `style` ("none" returns it untouched). Numbers
 * not among the sources are removed (with the space before them) and counted; "inline" makes
 * each marker a link to its page, "list" keeps the markers and appends the Sources section.
 */
export function resolveCitations(markdown: string, sources: readonly CitableSource[], style: CitationStyle): ResolvedCitations {
  if (style === "none") return { content: markdown, readText: markdown, cited: [], removed: 0 };
  const byNumber = new Map(sources.map((s) => [s.number, s]));
  const plainMarker = (n: number) => `[${n}]`;
  const shown = replaceCitations(markdown, byNumber, style === "inline" ? (n) => `[\\[${n}\\]](${linkDestination(byNumber.get(n)!.url)})` : plainMarker);
  const readText = style === "inline" ? replaceCitations(markdown, byNumber, plainMarker).text : shown.text;
  const content = style === "list" && sources.length > 0 ? `${shown.text.trimEnd()}\n\n${sourcesSection(sources)}` : shown.text;
  return { content, readText, cited: [...shown.cited].sort((a, b) => a - b), removed: shown.removed };
}

function replaceCitations(markdown: string, byNumber: ReadonlyMap<number, CitableSource>, marker: (n: number) => string) {
  const cited = new Set<number>();
  let removed = 0;
  const text = outsideCode(markdown, (prose) =>
    prose.replace(CITATION, (_whole, before: string, run: string) => {
      const numbers = Array.from(run.matchAll(/\d+/g), (m) => Number(m[0]));
      const known = numbers.filter((n) => byNumber.has(n));
      removed += numbers.length - known.length;
      // Removed with the space before it, so "figure [9]." reads "figure.".
      if (known.length === 0) return before === " " ? "" : before;
      for (const n of known) cited.add(n);
      return before + known.map(marker).join("");
    }),
  );
  return { text, cited, removed };
}
