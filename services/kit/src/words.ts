// Counting words the way a reader would: a word is a whitespace-separated token holding at least
// one letter or digit, so stray punctuation such as "—" or "•" left over from markup does not
// count. Chinese and Japanese put no spaces between words: each of their ideographs and kana
// counts as a word of its own, as word processors count them (a token "日本語" is three words,
// "東京2026" three), and the text around them in a token is counted as above. Korean spaces its
// words and is counted like the Latin scripts. The runner counts every finished article (and its
// originality check counts it again) and cuts research sources to length; the model simulator
// counts what it writes as it writes it.
const WORDLIKE = /[\p{L}\p{N}]/u;

/** Hiragana and katakana (without the middle dot ・), katakana phonetic extensions and half-width katakana, by UTF-16 code unit. */
export const isKana = (c: number) => (c >= 0x3040 && c <= 0x30ff && c !== 0x30fb) || (c >= 0x31f0 && c <= 0x31ff) || (c >= 0xff66 && c <= 0xff9f);
/** CJK ideographs of the basic plane (extension A, the unified block, compatibility), by UTF-16 code unit. */
export const isHan = (c: number) => (c >= 0x3400 && c <= 0x4dbf) || (c >= 0x4e00 && c <= 0x9fff) || (c >= 0xf900 && c <= 0xfaff);
// A word of its own in countWords: kana, an ideograph, or the high surrogate of a supplementary
// ideograph (U+20000-U+2FFFF), one word per pair. CJK below is the same ranges for regular expressions.
const isCjkUnit = (c: number) => isKana(c) || isHan(c) || (c >= 0xd840 && c <= 0xd87f);
const CJK = "\\u3040-\\u30fa\\u30fc-\\u30ff\\u3400-\\u4dbf\\u4e00-\\u9fff\\uf900-\\ufaff\\u31f0-\\u31ff\\uff66-\\uff9f";
/** A word's piece as `countWords` reads it: one ideograph or kana, or a run of other non-space characters. */
const PIECE = new RegExp(`[${CJK}]|[\\u{20000}-\\u{2ffff}]|[^\\s${CJK}\\u{20000}-\\u{2ffff}]+`, "gu");

// What \s matches beyond ASCII, by UTF-16 code unit (ASCII's are tab to carriage return and space).
const isWideSpace = (c: number) =>
  c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;

/**
 * The words of `text`, in one pass over its code units: ASCII is judged by code, and only a run
 * with other characters and no ASCII letter or digit goes through WORDLIKE. The tests are written
 * out in the loop rather than called: Bun's engine did not inline them, and the loop ran 2.9x slower
 * (58 against 20 µs for a 1,000-word article); a match of one regular expression per word was
 * slower still.
 */
export function countWords(text: string): number {
  let count = 0;
  let start = -1;
  let wordlike = false;
  let otherChars = false;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c <= 32 ? c === 32 || (c >= 9 && c <= 13) : c > 127 && isWideSpace(c)) {
      if (start >= 0 && (wordlike || (otherChars && WORDLIKE.test(text.slice(start, i))))) count++;
      start = -1;
    } else if (c >= 0x3040 && isCjkUnit(c)) {
      // A word of its own, ending the run before it.
      if (start >= 0 && (wordlike || (otherChars && WORDLIKE.test(text.slice(start, i))))) count++;
      start = -1;
      count++;
      if (c >= 0xd800) i++;
    } else {
      if (start < 0) {
        start = i;
        wordlike = false;
        otherChars = false;
      }
      if (!wordlike) {
        if (c > 127) otherChars = true;
        else wordlike = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
      }
    }
  }
  if (start >= 0 && (wordlike || (otherChars && WORDLIKE.test(text.slice(start))))) count++;
  return count;
}

/** The whitespace-separated tokens of `text`, words or not (what a global match of \S+ would find). */
export function countTokens(text: string): number {
  let count = 0;
  let inToken = false;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    // countWords' whitespace test, written out for the same reason.
    const space = c <= 32 ? c === 32 || (c >= 9 && c <= 13) : c > 127 && isWideSpace(c);
    if (!space && !inToken) count++;
    inToken = !space;
  }
  return count;
}

/** Keeps the first `max` words (as `countWords` counts them) and the original spacing and paragraph breaks between them. */
export function truncateWords(text: string, max: number): string {
  if (max <= 0) return "";
  let count = 0;
  for (const match of text.matchAll(PIECE)) {
    if (!WORDLIKE.test(match[0])) continue;
    count++;
    if (count === max) return text.slice(0, match.index! + match[0].length);
  }
  return text;
}
