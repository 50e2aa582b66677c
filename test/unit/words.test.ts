// Word and token counts: what articles are metered by (the runner) and what the model simulator
// writes to length.
import { describe, expect, test } from "bun:test";
import { countTokens, countWords, truncateWords } from "../../services/kit/src/words.ts";

// The rules the counts implement, as regular expressions: a word is an ideograph or kana, or a run
// of other non-space characters holding a letter or digit.
const CJK = "\\u3040-\\u30fa\\u30fc-\\u30ff\\u3400-\\u4dbf\\u4e00-\\u9fff\\uf900-\\ufaff\\u31f0-\\u31ff\\uff66-\\uff9f\\u{20000}-\\u{2ffff}";
const pieces = new RegExp(`[${CJK}]|[^\\s${CJK}]+`, "gu");
const wordsByRule = (text: string) => (text.match(pieces) ?? []).filter((piece) => /[\p{L}\p{N}]/u.test(piece)).length;
const tokensByRule = (text: string) => (text.match(/\S+/g) ?? []).length;

/** 300 texts of up to 40 pieces mixing words, punctuation and every kind of whitespace. */
function mixedTexts(): string[] {
  const parts = ["word", "Ünïcode", "日本語", "カタカナー", "・", "한국어", "𠀀𠀁", "。", "—", "•", "42", "a-b", "!", "é", " ", "  ", "\n", "\n\n", "\t", "\u00a0", "\u2003", "\u3000", "\ufeff", "\r\n"];
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % parts.length;
  return Array.from({ length: 300 }, (_, round) => Array.from({ length: 1 + (round % 40) }, () => parts[next()]).join(""));
}

describe("countWords", () => {
  test("counts words, not punctuation", () => {
    expect(countWords("")).toBe(0);
    expect(countWords("  one two\n\nthree — four •  ")).toBe(4);
    expect(countWords("It's 40 litres, £89.")).toBe(4);
    expect(countWords("ends on punctuation —")).toBe(3);
  });

  test("counts each Chinese or Japanese ideograph and kana as a word, as word processors do; Korean by its spaces", () => {
    expect(countWords("咖啡的研磨程度决定了风味。")).toBe(12);
    expect(countWords("コーヒーを淹れる")).toBe(8);
    expect(countWords("東京2026 and 日本語")).toBe(7);
    expect(countWords("ends on a wide token: 日本語")).toBe(8);
    expect(countWords("中点・は数えない")).toBe(7);
    expect(countWords("𠀀𠀁")).toBe(2);
    expect(countWords("커피를 내리는 방법")).toBe(3);
  });

  test("cutting to a number of words keeps as many as counted", () => {
    const text = "東京2026 and 日本語の記事です。 More words here.";
    for (let max = 1; max <= countWords(text); max++) expect(countWords(truncateWords(text, max))).toBe(max);
    expect(truncateWords("咖啡的研磨", 2)).toBe("咖啡");
  });

  test("agrees with its rule (ideographs and kana, and runs between them and \\s holding a letter or digit) on mixed text", () => {
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
