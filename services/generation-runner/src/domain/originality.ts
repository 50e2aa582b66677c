// Originality checks of article versions. A detector scores a text from 0 to 100: the estimated
// likelihood that a reader or a detection tool would take it for machine-written (higher = more
// machine-like). It is pluggable (ORIGINALITY_DETECTOR); the built-in one is a heuristic.
import { countWords } from "../../../kit/src/words.ts";

export interface OriginalityDetector {
  readonly name: string;
  score(text: string): Promise<number>;
}

// Phrases language models overuse and careful human writers avoid; lower-case, matched as substrings.
const STOCK_PHRASES = [
  "in today's fast-paced world",
  "in today's digital age",
  "in the ever-evolving",
  "ever-changing landscape",
  "it's important to note",
  "it is important to note",
  "it's worth noting",
  "it is worth noting",
  "let's dive in",
  "dive into",
  "delve into",
  "delves into",
  "a testament to",
  "navigate the complexities",
  "unlock the potential",
  "plays a crucial role",
  "plays a pivotal role",
  "in conclusion",
  "in summary",
  "whether you're a",
  "look no further",
  "game-changer",
  "seamlessly",
  "tapestry",
  "embark on",
  "furthermore,",
  "moreover,",
  "additionally,",
];

const FIRST_WORD = /^\S*/;
const clamp01 = (x: number) => Math.max(0, Math.min(1, x));

/** The sentences of three words or more, each with its word count (counted once: it is most of the check's work). */
function sentencesOf(text: string): { text: string; words: number }[] {
  const sentences: { text: string; words: number }[] = [];
  const parts = text
    .replace(/^#+\s.*$/gm, " ") // headings are labels, not sentences
    .split(/(?<=[.!?])\s+|\n{2,}/);
  for (const part of parts) {
    const sentence = part.trim();
    const words = countWords(sentence);
    if (words >= 3) sentences.push({ text: sentence, words });
  }
  return sentences;
}

/** Occurrences of `phrase` in `text`, not overlapping (as many as `split` would cut at). */
function occurrences(text: string, phrase: string): number {
  let count = 0;
  for (let at = text.indexOf(phrase); at !== -1; at = text.indexOf(phrase, at + phrase.length)) count++;
  return count;
}

/**
 * The built-in heuristic. What it measures, honestly: how uniform the writing is, not who wrote
 * it. Three signals, each from 0 (human-like) to 1 (machine-like):
 * - sentence-length burstiness (45%): people mix short and long sentences; a coefficient of
 *   variation of sentence lengths under about 0.6 reads as machine-even;
 * - stock phrases (35%): density of phrases models overuse, per 1,000 words (4 or more saturates);
 * - repeated openers (20%): the share of sentences starting with the same word as another one.
 * Short texts (under 80 words) carry too little signal and score a neutral 50. It cannot prove
 * authorship, is easy to fool, and may flag plain, formulaic human prose.
 */
export const heuristicDetector: OriginalityDetector = {
  name: "heuristic",
  async score(text: string): Promise<number> {
    const words = countWords(text);
    const sentences = sentencesOf(text);
    if (words < 80 || sentences.length < 4) return 50;

    const lengths = sentences.map((s) => s.words);
    const mean = lengths.reduce((a, b) => a + b, 0) / lengths.length;
    const sd = Math.sqrt(lengths.reduce((a, b) => a + (b - mean) ** 2, 0) / lengths.length);
    const evenness = clamp01((0.6 - sd / mean) / 0.45);

    const lower = text.toLowerCase();
    let stock = 0;
    for (const phrase of STOCK_PHRASES) stock += occurrences(lower, phrase);
    const stockiness = clamp01((stock * 1000) / words / 4);

    // A sentence's first word: what precedes its first space (sentences are trimmed).
    const openers = sentences.map((s) => FIRST_WORD.exec(s.text)![0].toLowerCase().replace(/[^\p{L}\p{N}']/gu, ""));
    const counts = new Map<string, number>();
    for (const o of openers) counts.set(o, (counts.get(o) ?? 0) + 1);
    const repeated = openers.filter((o) => (counts.get(o) ?? 0) > 1).length / openers.length;
    const sameness = clamp01((repeated - 0.2) / 0.5);

    return Math.round(100 * (0.45 * evenness + 0.35 * stockiness + 0.2 * sameness));
  },
};

export function originalityDetector(name: string): OriginalityDetector {
  if (name === heuristicDetector.name) return heuristicDetector;
  throw new Error(`ORIGINALITY_DETECTOR: unknown detector "${name}" (available: heuristic)`);
}
