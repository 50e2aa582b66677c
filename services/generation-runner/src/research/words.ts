// Word arithmetic for research limits (min content words, max words per source), by the rule of
// kit's countWords: a word is a whitespace-separated token holding at least one letter or digit.
const TOKEN = /\S+/g;
const WORDLIKE = /[\p{L}\p{N}]/u;

/** Keeps the first `max` words and the original spacing and paragraph breaks between them. */
export function truncateWords(text: string, max: number): string {
  if (max <= 0) return "";
  let count = 0;
  for (const match of text.matchAll(TOKEN)) {
    if (!WORDLIKE.test(match[0])) continue;
    count++;
    if (count === max) return text.slice(0, match.index! + match[0].length);
  }
  return text;
}
