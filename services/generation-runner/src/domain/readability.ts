// How easy an article is to read, by the standard formula of its language where one is in
// common use: Flesch reading ease for English and Amstad's adaptation of it for German, both on a
// 0 to 100 scale where higher reads easier. Other languages have no formula here, and are "not
// measured" rather than judged by a formula made for another language.

export interface Readability {
  /** The formula's name, as a reader of the report would look it up. */
  formula: string;
  /** Its score, rounded to one decimal. */
  score: number;
}

/** Syllables of one word, by vowel groups: the usual estimate, within one syllable for most words. */
export function syllablesOf(word: string, language: "en" | "de"): number {
  const w = word.toLowerCase().replace(/[^a-zäöüß]/g, "");
  if (w === "") return 0;
  if (language === "de") return Math.max(1, w.match(/[aeiouyäöü]+/g)?.length ?? 0);
  if (w.length <= 3) return 1;
  // A silent final e ("make"), or -es/-ed that adds no syllable ("makes", "named"), but not "-le" ("table").
  const trimmed = w.replace(/(?:[^laeiouy]es|[^laeiouy]ed|[^laeiouy]e)$/, (end) => end[0]!).replace(/^y/, "");
  return Math.max(1, trimmed.match(/[aeiouy]+/g)?.length ?? 0);
}

/**
 * The prose of a markdown text: headings, code, tables, images and link targets left out, since
 * a formula counts sentences and a heading or a table row is not one.
 */
export function proseOf(markdown: string): string {
  return markdown
    .replace(/```[\s\S]*?(```|$)/g, " ")
    .split("\n")
    .filter((line) => !/^\s*(#|\||<)/.test(line))
    .join("\n")
    .replace(/!\[[^\]]*\]\([^)]*\)/g, " ")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/\[\d+\]/g, " ");
}

const wordsOf = (prose: string) => prose.match(/[\p{L}\p{N}][\p{L}\p{N}'’-]*/gu) ?? [];
// A sentence ends at a full stop, question or exclamation mark, or the end of a list item or paragraph.
const sentencesOf = (prose: string) => prose.split(/[.!?…]+(?=\s|$)|\n\s*\n|\n\s*(?:[-*+]|\d+[.)])\s/).filter((s) => /[\p{L}\p{N}]/u.test(s)).length;

/** The readability of a markdown text in `language`, or null where no formula is used for it or there is no prose. */
export function readabilityOf(markdown: string, language: string): Readability | null {
  if (language !== "en" && language !== "de") return null;
  const prose = proseOf(markdown);
  const words = wordsOf(prose);
  const sentences = sentencesOf(prose);
  if (words.length === 0 || sentences === 0) return null;
  const wordsPerSentence = words.length / sentences;
  const syllablesPerWord = words.reduce((sum, w) => sum + syllablesOf(w, language), 0) / words.length;
  const score =
    language === "en"
      ? 206.835 - 1.015 * wordsPerSentence - 84.6 * syllablesPerWord
      : 180 - wordsPerSentence - 58.5 * syllablesPerWord;
  return { formula: language === "en" ? "Flesch reading ease" : "Flesch reading ease (Amstad)", score: Math.round(score * 10) / 10 };
}
