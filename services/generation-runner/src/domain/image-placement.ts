// Where an article's images go in its markdown, and what each one illustrates. Image 1 is the
// featured image, right after the introduction (before the first top-level section); the others
// are spread evenly over the boundaries between top-level sections, then between paragraphs when
// the article has fewer sections than images. The same rules place the images again in the
// humanized version, so both versions show the same images at the same places.
import { envelopeOf, parseJsonDocument } from "../../../kit/src/article-envelope.ts";

export interface ImageSlot {
  /** The line the image goes before (the number of lines: the end of the article). */
  at: number;
  /** What the image illustrates: the title for the featured image, else its section's heading. */
  subject: string;
  /** The opening words of that part of the article, for the image prompt. */
  context: string;
  /** The image's alt text: its subject, with the passage's first sentence when another image has that subject too. */
  alt: string;
}

/** An image as the content shows it. */
export interface PlacedImage {
  position: number;
  url: string;
  alt: string;
}

interface Block {
  start: number;
  end: number;
  kind: "heading" | "paragraph" | "other";
  level: number;
  text: string;
}

const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
// Lines that open something other than plain prose: lists, quotes, tables, html, indented code.
const NOT_PROSE = /^(?: {0,3}(?:[-*+]\s|\d+[.)]\s|>|\||<)| {4}|\t)/;
const CONTEXT_WORDS = 40;
const MAX_ALT = 125;

const blank = (line: string) => line.trim() === "";

function blocksOf(lines: string[]): Block[] {
  const blocks: Block[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (blank(line)) {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      let j = i + 1;
      while (j < lines.length && !lines[j]!.trim().startsWith(fence[1]!)) j++;
      const end = Math.min(j + 1, lines.length);
      blocks.push({ start: i, end, kind: "other", level: 0, text: "" });
      i = end;
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      blocks.push({ start: i, end: i + 1, kind: "heading", level: heading[1]!.length, text: heading[2] ?? "" });
      i++;
      continue;
    }
    let j = i + 1;
    while (j < lines.length && !blank(lines[j]!) && !HEADING.test(lines[j]!) && !FENCE.test(lines[j]!)) j++;
    blocks.push({ start: i, end: j, kind: NOT_PROSE.test(line) ? "other" : "paragraph", level: 0, text: lines.slice(i, j).join(" ") });
    i = j;
  }
  return blocks;
}

/** Markdown inline syntax and markup left out: what a reader sees of a heading or paragraph. */
export function plainText(markdown: string): string {
  return markdown
    .replace(/!\[[^\]]*\]\([^)]*\)/g, "")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<[^>]*>/g, "")
    .replace(/[*_`#\\[\]]/g, "")
    .replace(/\s+/g, " ")
    .trim();
}

const firstWords = (text: string, words: number) => text.split(" ").slice(0, words).join(" ");

/** Alt text from what the image illustrates: plain words, cut at a word boundary. */
export function altTextOf(subject: string): string {
  const text = plainText(subject);
  if (text.length <= MAX_ALT) return text;
  return text.slice(0, MAX_ALT).replace(/\s+\S*$/, "");
}

/** Alt texts told apart: a subject met again adds its passage's first sentence, then a number. */
function withAltTexts(slots: Omit<ImageSlot, "alt">[]): ImageSlot[] {
  const seen = new Set<string>();
  return slots.map((slot) => {
    let alt = altTextOf(slot.subject);
    if (seen.has(alt) && slot.context) alt = altTextOf(`${slot.subject}: ${slot.context.split(/(?<=[.!?])\s/)[0]}`);
    for (let n = 2; seen.has(alt); n++) alt = `${altTextOf(slot.subject)} (${n})`;
    seen.add(alt);
    return { ...slot, alt };
  });
}

/** `count` picks spread evenly over `list` (which holds at least that many). */
function spread<T>(list: T[], count: number): T[] {
  return Array.from({ length: count }, (_, j) => list[Math.floor(((j + 0.5) * list.length) / count)]!);
}

/** The slots of images 1..count in `body` (the article's markdown), in position order. */
export function imageSlots(body: string, count: number, title: string): ImageSlot[] {
  if (count <= 0) return [];
  const lines = body.split("\n");
  const blocks = blocksOf(lines);
  const startOf = (index: number) => blocks[index]?.start ?? lines.length;
  // A leading level-1 heading is the article's title, not a section.
  const first = blocks[0]?.kind === "heading" && blocks[0].level === 1 ? 1 : 0;
  const levels = blocks.slice(first).filter((b) => b.kind === "heading").map((b) => b.level);
  const top = levels.length ? Math.min(...levels) : 0;
  const sections = blocks.map((b, i) => ({ b, i })).filter(({ b, i }) => i >= first && b.kind === "heading" && b.level === top).map(({ i }) => i);

  /** The heading of the section holding block `index` (the title before the first section). */
  const headingAt = (index: number) => {
    const owner = sections.filter((s) => s <= index).pop();
    return owner === undefined ? title : blocks[owner]!.text;
  };
  /** The first paragraph from block `index` on, up to the next top-level section. */
  const contextFrom = (index: number) => {
    for (let i = index; i < blocks.length && (i === index || !sections.includes(i)); i++) {
      if (blocks[i]!.kind === "paragraph") return firstWords(plainText(blocks[i]!.text), CONTEXT_WORDS);
    }
    return "";
  };

  // The featured image: after the introduction, or after the first paragraph of an article without sections.
  let featuredBefore: number;
  if (sections.length > 0) featuredBefore = sections[0]!;
  else {
    const opening = blocks.findIndex((b, i) => i >= first && b.kind === "paragraph");
    featuredBefore = opening === -1 ? first : opening + 1;
  }
  const featured: Omit<ImageSlot, "alt"> = { at: startOf(featuredBefore), subject: title, context: contextFrom(first) };

  const wanted = count - 1;
  const betweenSections: Omit<ImageSlot, "alt">[] = sections.slice(1).map((s, k) => ({ at: startOf(s), subject: blocks[sections[k]!]!.text, context: contextFrom(sections[k]!) }));
  let others: Omit<ImageSlot, "alt">[];
  if (betweenSections.length >= wanted) others = spread(betweenSections, wanted);
  else {
    const taken = new Set([featured.at, ...betweenSections.map((s) => s.at)]);
    const betweenParagraphs: Omit<ImageSlot, "alt">[] = [];
    for (let i = 1; i < blocks.length; i++) {
      const at = blocks[i]!.start;
      if (blocks[i]!.kind !== "paragraph" || blocks[i - 1]!.kind !== "paragraph" || at <= featured.at || taken.has(at)) continue;
      betweenParagraphs.push({ at, subject: headingAt(i), context: firstWords(plainText(blocks[i - 1]!.text), CONTEXT_WORDS) });
    }
    const fill = Math.min(wanted - betweenSections.length, betweenParagraphs.length);
    others = [...betweenSections, ...spread(betweenParagraphs, fill)].sort((a, b) => a.at - b.at);
    // A short article: the rest close it, one after another.
    const last = sections.length ? sections[sections.length - 1]! : first;
    while (others.length < wanted) others.push({ at: lines.length, subject: headingAt(blocks.length - 1), context: contextFrom(last) });
  }
  return withAltTexts([featured, ...others]);
}

/** `body` with the images at their slots (the slots of `count` images, so a left-out one leaves its place empty). */
export function placeImages(body: string, count: number, images: PlacedImage[]): string {
  const slots = imageSlots(body, count, "");
  const lines = body.split("\n");
  const before = new Map<number, string[]>();
  for (const image of [...images].sort((a, b) => a.position - b.position)) {
    const slot = slots[image.position - 1];
    if (!slot) continue;
    before.set(slot.at, [...(before.get(slot.at) ?? []), `![${image.alt.replace(/[[\]\\]/g, "")}](${image.url})`]);
  }
  const out: string[] = [];
  const addImages = (markdown: string[]) => {
    for (const image of markdown) {
      if (out.length > 0 && !blank(out[out.length - 1]!)) out.push("");
      out.push(image, "");
    }
  };
  // Trailing blank lines are kept aside so images at the end come before them.
  let end = lines.length;
  while (end > 0 && blank(lines[end - 1]!)) end--;
  for (let i = 0; i < end; i++) {
    addImages(before.get(i) ?? []);
    out.push(lines[i]!);
  }
  const closing = [...before.entries()].filter(([at]) => at >= end).flatMap(([, md]) => md);
  if (closing.length > 0) {
    addImages(closing);
    out.pop();
  }
  return [...out, ...lines.slice(end)].join("\n");
}

/**
 * Stored content with its images: a JSON envelope gets them in its body. No images, or a JSON
 * document without a body to put them in, leaves it as it is (the article still lists them).
 */
export function withImages(content: string, count: number, images: PlacedImage[]): string {
  if (images.length === 0) return content;
  const envelope = envelopeOf(content);
  if (!envelope) return parseJsonDocument(content) === undefined ? placeImages(content, count, images) : content;
  return JSON.stringify({ ...envelope.document, article: { ...envelope.article, content: placeImages(envelope.body, count, images) } });
}
