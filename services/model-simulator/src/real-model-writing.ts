// The model `sim-real` writes as real models do rather than to the word: a pipeline tuned only
// against a simulator that writes exactly what it is asked for never learns to cope with them.
// Every prose reply of that model (any prompt, any step, live or batched; JSON replies and
// `[[sim:echo]]` excepted) is shaped by this profile:
//   - a short request (up to SHORT_UP_TO words) is overshot by 20–30%;
//   - a long request (from LONG_FROM words) gets 55–70% of what it asked;
//   - between the two the share slides linearly from one range to the other;
//   - no call writes past its ceiling, 1,400–1,500 words, however much it was asked for;
//   - about one call in five runs out of room: it is cut mid-sentence, finish_reason "length".
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
} as const;

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
