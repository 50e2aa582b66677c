// Word and token counts: what articles are metered by (the runner) and what the model simulator
// writes to length.
import { describe, expect, test } from "bun:test";
import { countTokens, countWords } from "../../services/kit/src/words.ts";

// The rules the counts implement, as regular expressions.
const wordsByRule = (text: string) => (text.match(/\S+/g) ?? []).filter((token) => /[\p{L}\p{N}]/u.test(token)).length;
const tokensByRule = (text: string) => (text.match(/\S+/g) ?? []).length;

/** 300 texts of up to 40 pieces mixing words, punctuation and every kind of whitespace. */
function mixedTexts(): string[] {
  const pieces = ["word", "Ünïcode", "日本語", "—", "•", "42", "a-b", "!", "é", " ", "  ", "\n", "\n\n", "\t", "\u00a0", "\u2003", "\u3000", "\ufeff", "\r\n"];
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % pieces.length;
  return Array.from({ length: 300 }, (_, round) => Array.from({ length: 1 + (round % 40) }, () => pieces[next()]).join(""));
}

describe("countWords", () => {
  test("counts words, not punctuation", () => {
    expect(countWords("")).toBe(0);
    expect(countWords("  one two\n\nthree — four •  ")).toBe(4);
    expect(countWords("It's 40 litres, £89.")).toBe(4);
    expect(countWords("ends on a wide token: 日本語")).toBe(6);
    expect(countWords("ends on punctuation —")).toBe(3);
  });

  test("agrees with its rule (tokens between \\s holding a letter or digit) on mixed text", () => {
    for (const text of mixedTexts()) expect(countWords(text)).toBe(wordsByRule(text));
  });
});

describe("countTokens", () => {
  test("counts every whitespace-separated token, punctuation included", () => {
    expect(countTokens("")).toBe(0);
    expect(countTokens("  one two\n\nthree — four •  ")).toBe(6);
    expect(countTokens("last")).toBe(1);
  });

  test("agrees with /\\S+/g on mixed text", () => {
    for (const text of mixedTexts()) expect(countTokens(text)).toBe(tokensByRule(text));
  });
});
