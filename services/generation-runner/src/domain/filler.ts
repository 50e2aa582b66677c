// What pads a text rather than saying anything: a model talking about itself or a template left
// unfilled (placeholders), stock filler phrases, and paragraphs said twice. The brief checks report
// it (no_placeholder_text, no_filler), brief repairs remove it, and length control keeps it out of
// the paragraphs its calls add: padding is never how an article reaches its length.
import { countWords } from "../../../kit/src/words.ts";

// Phrases that only a model talking about itself, or a template left unfilled, would leave in an article.
const PLACEHOLDERS = [
  /\bas an ai\b[^.\n]{0,40}/i,
  /\bas a (?:large )?language model\b/i,
  /\bI (?:cannot|can't|am unable to) (?:write|provide|assist)\b/i,
  /\[(?:insert|add|your|placeholder)\b[^\]\n]{0,60}\]?/i,
  /\blorem ipsum\b/i,
  /\{\{[^}\n]{0,40}\}\}/,
  /^(?:sure|certainly|of course)[,!]? here(?: is|'s)\b[^\n]{0,40}/im,
];

/** The placeholder and model-talk phrases a text holds, as found. */
export const placeholdersIn = (text: string): string[] => PLACEHOLDERS.flatMap((p) => p.exec(text)?.[0]?.trim() ?? []);

// Stock phrases that pad a text without saying anything: the "In conclusion" summaries and the
// throat-clearing models lean on, in the service's most used languages.
const FILLER = [
  /\bin conclusion\b/i,
  /\bto sum (?:it )?up\b/i,
  /\bin summary,/i,
  /\bin today's (?:fast-paced|ever-changing|digital) world\b/i,
  /\bit(?:'s| is) (?:important|worth) (?:to note|noting) that\b/i,
  /\blet's delve\b|\bdelve (?:deeper )?into\b/i,
  /\bwithout further ado\b/i,
  /\bzusammenfassend (?:lässt sich|kann man) sagen\b/i,
  /\babschließend lässt sich sagen\b/i,
  /\ben conclusion,/i,
  /\ben resumen,/i,
];

/** A paragraph as compared for repeats: case and punctuation aside. */
export const paragraphKey = (paragraph: string) => paragraph.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();

/**
 * Paragraphs of prose that repeat an earlier one word for word (case and punctuation aside):
 * padding, never new material. Short lines (a list item, "Keep it simple.") may recur and are not counted.
 */
export function repeatedParagraphs(body: string): string[] {
  const seen = new Set<string>();
  const repeated: string[] = [];
  for (const paragraph of body.split(/\n\s*\n/)) {
    const text = paragraph.trim();
    if (text.startsWith("#") || text.startsWith("|") || text.startsWith("```") || countWords(text) < 12) continue;
    const key = paragraphKey(text);
    if (seen.has(key)) repeated.push(text);
    else seen.add(key);
  }
  return repeated;
}

const excerpt = (text: string) => (text.length > 60 ? `${text.slice(0, 57).trimEnd()}…` : text);

/** The filler a text holds: stock phrases as found, and each repeated paragraph ("repeated paragraph: …"). */
export function fillerIn(text: string): string[] {
  const phrases = FILLER.flatMap((p) => p.exec(text)?.[0] ?? []);
  return [...phrases, ...repeatedParagraphs(text).map((p) => `repeated paragraph: ${excerpt(p)}`)];
}

/**
 * The paragraphs of a reply that are new material for `article`: those holding model talk or
 * stock filler, or repeating a paragraph of the article or of the reply, are left out.
 */
export function newMaterial(reply: string, article: string): string {
  const seen = new Set(article.split(/\n\s*\n/).map(paragraphKey));
  return reply
    .split(/\n\s*\n/)
    .filter((paragraph) => {
      const key = paragraphKey(paragraph);
      const padding = placeholdersIn(paragraph).length > 0 || FILLER.some((p) => p.test(paragraph)) || (countWords(paragraph) >= 12 && seen.has(key));
      seen.add(key);
      return !padding;
    })
    .join("\n\n")
    .trim();
}
