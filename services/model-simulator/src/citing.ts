// Citations as a model writes them when asked to cite numbered sources (the runner's citation
// instruction, kit/src/rules/citations.ts): deterministic, so whole-stack tests know what to expect. With
// sources 1..n listed, every source but the last is cited (with one source, it is), spread over
// the prose paragraphs in turn (a paragraph takes several when there are more sources than
// paragraphs), the last source stays uncited, and the article's last paragraph cites n + 1, a
// number that was not a source, as a model sometimes invents one.
// A prompt without the instruction gets its text untouched.
import { CITATION_INSTRUCTION_START } from "../../kit/src/rules/citations.ts";

/** The source numbers the instruction lists, ascending; empty when the prompt asks for no citations. */
export function sourceNumbersAsked(prompt: string): number[] {
  const at = prompt.indexOf(CITATION_INSTRUCTION_START);
  if (at < 0) return [];
  const numbers = Array.from(prompt.slice(at).matchAll(/^\[(\d{1,3})\] /gm), (m) => Number(m[1]));
  return [...new Set(numbers)].sort((a, b) => a - b);
}

/** Puts ` [n][m]` before a paragraph's closing full stop (or after its last character). */
function cite(paragraph: string, numbers: number[]): string {
  const markers = ` ${numbers.map((n) => `[${n}]`).join("")}`;
  return paragraph.endsWith(".") ? `${paragraph.slice(0, -1)}${markers}.` : `${paragraph}${markers}`;
}

/** The article with its prose paragraphs citing the listed sources, and one unknown number at its end. */
export function citing(prompt: string, article: string): string {
  const numbers = sourceNumbersAsked(prompt);
  if (numbers.length === 0) return article;
  const citable = numbers.length > 1 ? numbers.slice(0, -1) : numbers;
  const blocks = article.replace(/\n+$/, "").split("\n\n");
  const prose = blocks.map((b, i) => (/^[#>\-*|!`\d]/.test(b) ? -1 : i)).filter((i) => i >= 0);
  prose.forEach((blockIndex, k) => {
    const own = citable.length > prose.length ? citable.filter((_, j) => j % prose.length === k) : [citable[k % citable.length]!];
    blocks[blockIndex] = cite(blocks[blockIndex]!, own);
  });
  const lastProse = prose[prose.length - 1];
  if (lastProse !== undefined) blocks[lastProse] = cite(blocks[lastProse]!, [numbers[numbers.length - 1]! + 1]);
  return `${blocks.join("\n\n")}\n`;
}
