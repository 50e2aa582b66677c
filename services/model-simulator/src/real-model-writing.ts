// The model `sim-real` writes as real models do rather than to the word: a pipeline tuned only
// against a simulator that writes exactly what it is asked for never learns to cope with them.
// Every prose reply of that model (any prompt, any step, live or batched; JSON replies and
// `[[sim:echo]]` excepted) is shaped by this profile:
//   - a short request (up to SHORT_UP_TO words) is overshot by 20–30%;
//   - a long request (from LONG_FROM words) gets 55–70% of what it asked;
//   - between the two the share slides linearly from one range to the other;
//   - no call writes past its ceiling, 1,400–1,500 words, however much it was asked for;
//   - about one call in five runs out of room: it is cut mid-sentence, finish_reason "length";
//   - about one reply in six of FILLER_FROM words or more carries one of a model's padding habits:
//     a remark about itself ("As an AI language model, …"), an "In conclusion, …" paragraph, or a
//     paragraph said twice; the reply's length is the same (the habit's words replace drafted ones).
// Every draw is seeded from the request (its messages and format), so the same call always comes
// back the same way and nothing depends on which test, step or caller is asking.
import { diceFor, hashText, type Dice } from "./prompt-seed.ts";

export const REAL_MODEL = "sim-real";

export const REAL_MODEL_PROFILE = {
  shortUpTo: 600,
  longFrom: 1_200,
  /** Share of the asked words a short request gets. */
  shortShare: [1.2, 1.3],
  /** Share of the asked words a long request gets. */
  longShare: [0.55, 0.7],
  /** Most words one call writes (drawn per call). */
  ceiling: [1_400, 1_500],
  /** One call in `cutEvery` is cut mid-sentence. */
  cutEvery: 5,
  /** Where a cut falls, as a share of the words written. */
  cutAt: [0.6, 0.95],
  /** One reply in `fillerEvery`, of `fillerFrom` words or more, carries a padding habit. */
  fillerEvery: 6,
  fillerFrom: 300,
} as const;

export type FillerHabit = "model talk" | "in conclusion" | "repeated paragraph";
const HABITS: readonly FillerHabit[] = ["model talk", "in conclusion", "repeated paragraph"];
const MODEL_TALK = "As an AI language model, I cannot try any of this myself.";

/** The padding habit the reply seeded by `seed` carries, if any. */
export function fillerHabitOf(words: number, seed: string): FillerHabit | null {
  if (words < REAL_MODEL_PROFILE.fillerFrom || hashText(`filler#${seed}`) % REAL_MODEL_PROFILE.fillerEvery !== 0) return null;
  return HABITS[hashText(`habit#${seed}`) % HABITS.length]!;
}

/** A habit's text: the remark, the closing paragraph, or the paragraph said twice (`paragraph` writes one of about n words). */
export function fillerOf(habit: FillerHabit, paragraph: (words: number) => string): string[] {
  if (habit === "model talk") return [MODEL_TALK];
  if (habit === "in conclusion") {
    const text = paragraph(40);
    return [`In conclusion, ${text[0]!.toLowerCase()}${text.slice(1)}`];
  }
  const text = paragraph(60);
  return [text, text];
}

/**
 * The article with the habit's text in it: the remark opens the first paragraph, the closing
 * paragraph ends the article, a paragraph said twice follows the first paragraph and ends the article.
 */
export function withFiller(article: string, habit: FillerHabit, filler: string[]): string {
  const paragraphs = article.trimEnd().split("\n\n");
  const first = paragraphs.findIndex((p) => p.trim() !== "" && !p.startsWith("#"));
  if (first < 0) return article;
  if (habit === "model talk") paragraphs[first] = `${filler[0]} ${paragraphs[first]}`;
  else if (habit === "in conclusion") paragraphs.push(filler[0]!);
  else {
    paragraphs.splice(first + 1, 0, filler[0]!);
    paragraphs.push(filler[1]!);
  }
  return `${paragraphs.join("\n\n")}\n`;
}

/** Whether the model named writes like a real model. */
export const writesLikeARealModel = (model: string): boolean => model === REAL_MODEL;

const between = (dice: Dice, [low, high]: readonly [number, number]) => low + dice.next() * (high - low);

/** The words a real model writes when asked for `asked`, for the call seeded by `seed`. */
export function wordsWritten(asked: number, seed: string): number {
  const p = REAL_MODEL_PROFILE;
  const dice = diceFor(`length#${seed}`);
  const slide = Math.min(1, Math.max(0, (asked - p.shortUpTo) / (p.longFrom - p.shortUpTo)));
  const draw = dice.next();
  const share = (range: readonly [number, number]) => range[0] + draw * (range[1] - range[0]);
  const factor = share(p.shortShare) + slide * (share(p.longShare) - share(p.shortShare));
  return Math.max(1, Math.min(Math.round(asked * factor), Math.round(between(dice, p.ceiling))));
}

/** Whether the call seeded by `seed` runs out of room before its text ends. */
export const isCutShort = (seed: string): boolean => hashText(`cut#${seed}`) % REAL_MODEL_PROFILE.cutEvery === 0;

/**
 * The text cut after a word that ends no sentence and no line, somewhere in its last stretch, as a
 * reply stopped by its token limit ends; the text as it is when no such word is left.
 */
export function cutMidSentence(text: string, seed: string): string {
  const dice = diceFor(`cut-at#${seed}`);
  const tokens = [...text.matchAll(/\S+/g)];
  const from = Math.floor(tokens.length * between(dice, REAL_MODEL_PROFILE.cutAt));
  for (let i = Math.max(1, from); i < tokens.length - 1; i++) {
    const token = tokens[i]!;
    const end = token.index! + token[0].length;
    const inHeading = text.startsWith("#", text.lastIndexOf("\n", token.index!) + 1);
    // A word inside a sentence of prose: not the end of one, not in a heading, and followed on its line by another word.
    if (!/[.!?:;,)\]]$/.test(token[0]) && text[end] === " " && /\p{L}/u.test(token[0]) && !inHeading) return text.slice(0, end);
  }
  return text;
}
