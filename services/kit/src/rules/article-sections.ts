// The H2 sections of an article's markdown body, as section operations name and replace them
// (POST /v1/articles/{id}/revisions). A section runs from its `## ` heading line to the next
// H2 (or the end of the body); splicing replaces only the text between its heading line and the
// next H2, so every byte outside that span stays as it was.
import { countWords } from "../words.ts";

export interface ArticleSection {
  /** 1 for the first H2 of the body. */
  index: number;
  /** The heading's text, without `## ` and closing hashes. */
  heading: string;
  /** Where its heading line starts. */
  start: number;
  /** Where the text after its heading line starts. */
  bodyStart: number;
  /** Where the next H2 starts, or the body's length. */
  end: number;
}

// An ATX H2 (up to 3 spaces of indent, as CommonMark allows) and a code fence's opening line.
const H2_LINE = /^ {0,3}##[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const FENCE = /^ {0,3}(```|~~~)/;
// An image's markdown: its alt text is not prose a reader reads.
const IMAGE = /!\[[^\]]*\]\([^)]*\)/g;

/** The body's H2 sections in order (headings inside fenced code are not sections). */
export function articleSections(body: string): ArticleSection[] {
  const sections: ArticleSection[] = [];
  let fence: string | null = null;
  let offset = 0;
  for (const line of body.split("\n")) {
    const lineEnd = offset + line.length;
    const fenceMark = FENCE.exec(line)?.[1];
    if (fenceMark && (fence === null || fence === fenceMark)) fence = fence === null ? fenceMark : null;
    else if (fence === null) {
      const heading = H2_LINE.exec(line.replace(/\r$/, ""));
      if (heading) {
        const last = sections.at(-1);
        if (last) last.end = offset;
        sections.push({ index: sections.length + 1, heading: heading[1]!.trim(), start: offset, bodyStart: Math.min(lineEnd + 1, body.length), end: body.length });
      }
    }
    offset = lineEnd + 1;
  }
  return sections;
}

/** The section a client named: its index (1-based, a number or digits) or its heading text (case and spacing aside). */
export function findSection(sections: readonly ArticleSection[], named: string | number): ArticleSection | undefined {
  if (typeof named === "number" || /^\d{1,4}$/.test(named.trim())) return sections.find((s) => s.index === Number(named));
  const wanted = normalHeading(named);
  return sections.find((s) => normalHeading(s.heading) === wanted);
}

const normalHeading = (heading: string) => heading.trim().replace(/\s+/g, " ").toLowerCase();

/** The section's text after its heading line (what an operation rewrites). */
export const sectionText = (body: string, section: ArticleSection) => body.slice(section.bodyStart, section.end);

/** Words a reader reads in the section's text. */
export const sectionWords = (body: string, section: ArticleSection) => countWords(sectionText(body, section).replace(IMAGE, " "));

/**
 * The body with the section's text replaced by `text` (and its heading line by `heading`, when
 * given): the blank lines that opened and closed the old text are kept, so the next heading and
 * everything else stay byte for byte.
 */
export function spliceSection(body: string, section: ArticleSection, text: string, heading?: string): string {
  const old = sectionText(body, section);
  const opening = /^\s*/.exec(old)![0];
  const closing = old.trim() === "" ? "" : /\s*$/.exec(old)![0];
  const headingLine = heading === undefined ? body.slice(section.start, section.bodyStart) : `## ${heading}${body.slice(section.start, section.bodyStart).endsWith("\n") ? "\n" : ""}`;
  return `${body.slice(0, section.start)}${headingLine}${opening}${text.trim()}${closing}${body.slice(section.end)}`;
}

/**
 * A model's rewrite of a section as the text to splice in: a heading it repeated at the top is
 * taken off (returned apart, for a translation), and any H1 or H2 left inside goes down to H3,
 * so the rewrite never adds or splits sections.
 */
export function revisedSectionText(reply: string): { text: string; heading?: string } {
  let text = reply.replace(/^\s*```(?:markdown|md)?\s*\n([\s\S]*?)\n```\s*$/, "$1").trim();
  let heading: string | undefined;
  const first = /^(#{1,2})[ \t]+(.+?)[ \t#]*(?:\n|$)/.exec(text);
  if (first) {
    heading = first[2]!.trim();
    text = text.slice(first[0].length).trim();
  }
  text = text.replace(/^ {0,3}#{1,2}[ \t]+/gm, "### ");
  return { text, heading };
}
