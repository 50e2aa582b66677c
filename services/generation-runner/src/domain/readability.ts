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

const code = (c: string) => c.charCodeAt(0);
const [A, E, I, O, U, Y, L, D, S, Z] = [..."aeiouylds z"].filter((c) => c !== " ").map(code) as number[];
const [AE, OE, UE, SZ] = [..."äöüß"].map(code) as number[];
const isLetter = (c: number) => (c >= A! && c <= Z!) || c === AE || c === OE || c === UE || c === SZ;
const isEnglishVowel = (c: number) => c === A || c === E || c === I || c === O || c === U || c === Y;
const isVowel = (c: number, language: "en" | "de") => isEnglishVowel(c) || (language === "de" && (c === AE || c === OE || c === UE));
// Letters that let a final -e, -es or -ed stay silent: any letter but l and the vowels ("table" keeps its -le).
const silences = (c: number | undefined) => c !== undefined && c !== L && !isEnglishVowel(c);
// The letters of the word being counted (a word longer than this is counted on its first letters).
const letters = new Uint16Array(256);

/**
 * Syllables of one word, by vowel groups: the usual estimate, within one syllable for most words.
 * One pass over its character codes rather than regular expressions: the readability check runs it
 * on every word of every article, and the expressions were the largest part of the report's cost.
 */
export function syllablesOf(word: string, language: "en" | "de"): number {
  const lower = word.toLowerCase();
  let length = 0;
  for (let i = 0; i < lower.length && length < letters.length; i++) {
    const c = lower.charCodeAt(i);
    if (isLetter(c)) letters[length++] = c;
  }
  if (length === 0) return 0;
  if (language === "en" && length <= 3) return 1;
  let start = 0;
  let end = length;
  if (language === "en") {
    // A silent final e ("make"), or -es/-ed that adds no syllable ("makes", "named"), but not "-le" ("table").
    const last = letters[end - 1];
    const beforeLast = letters[end - 2];
    if (beforeLast === E && (last === S || last === D) && silences(letters[end - 3])) end -= 2;
    else if (last === E && silences(beforeLast)) end -= 1;
    if (letters[0] === Y) start = 1;
  }
  let groups = 0;
  let inGroup = false;
  for (let i = start; i < end; i++) {
    const vowel = isVowel(letters[i]!, language);
    if (vowel && !inGroup) groups++;
    inGroup = vowel;
  }
  return Math.max(1, groups);
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

/** The readability of a text's prose (`proseOf` its markdown) in `language`, or null where no formula is used for it or there is no prose. */
export function readabilityOf(prose: string, language: string): Readability | null {
  if (language !== "en" && language !== "de") return null;
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
