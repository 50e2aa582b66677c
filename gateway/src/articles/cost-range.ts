// The cost range an estimate answers: what generating the article should cost at the model
// catalog's prices, from the words to generate and the workflow's steps. Prompts are not known
// here (built-in prompts never leave the catalog), so each step is given a fixed allowance for
// its instructions. docs/api.md, "Cost breakdown and estimates", states the same rules.
import { formatUsd, parseUsd, type Picodollars } from "../../../services/kit/src/rules/usd.ts";

/** Instruction tokens per step: built-in steps run 140–420 words of instructions (about 190–560 tokens). */
export const INSTRUCTION_TOKENS = { min: 200, max: 750 } as const;

export interface Prices {
  inputPricePerMillion: string;
  outputPricePerMillion: string;
}

export interface CostRangeInput {
  /** target_word_count. */
  targetWords: number;
  /** The words creation reserves (120% of the target): the most one step is taken to write. */
  reservedWords: number;
  steps: number;
  /** Words of what the caller sent that prompts can carry (title, keywords, context, instruction, audience). */
  requestWords: number;
  /** Research text a step can read: the least (one shortest source) and the most (every source at its longest); 0 without research. */
  researchWords: { min: number; max: number };
  humanize: boolean;
  model: Prices;
  /** The model's fallback, which runs (and bills) when the model fails. */
  fallback?: Prices;
  /** Batch mode bills half and has no fallback. */
  batch: boolean;
  /** The finishing work after the steps, for a workflow that gets it (built-in, or custom opted in); undefined: none. */
  finishing?: { repairCalls: number };
}

export interface TokenRange {
  min: number;
  max: number;
}

export interface CostRange {
  promptTokens: TokenRange;
  completionTokens: TokenRange;
  /** Decimal USD, rounded down to a millionth of a dollar. */
  min: string;
  /** Decimal USD, rounded up to a millionth of a dollar. */
  max: string;
}

/** About three words per four tokens, the usual rule for English text. */
export const tokensFor = (words: number) => Math.ceil((words * 4) / 3);

const MICRO: Picodollars = 1_000_000n;

function priceOf(prompt: number, completion: number, prices: Prices, batch: boolean): Picodollars {
  const raw = BigInt(prompt) * parseUsd(prices.inputPricePerMillion) + BigInt(completion) * parseUsd(prices.outputPricePerMillion);
  return raw / (batch ? 2_000_000n : 1_000_000n);
}

// Length control asks at most this many words of one call (length-control.ts's MOST_ASKED), and a
// call reads the section it extends or rewrites: up to twice that.
const FINISHING_CALL_WORDS = 450;

/**
 * Most tokens the finishing work can take (the least is none: a draft that lands within its length
 * and meets its brief makes no call). A pass of length control writes at most the reserved words,
 * one call per 450 words, each reading a section of up to 900 words and its instructions; there are
 * two passes (before and after the repairs), and two more after the humanization pass, which
 * rewrites the whole text; the repair calls (at most repairCalls per article, whichever round makes
 * them) each read a section and write one.
 */
function finishingMax(input: CostRangeInput, reserved: number): { prompt: number; completion: number } {
  if (!input.finishing) return { prompt: 0, completion: 0 };
  const callPrompt = INSTRUCTION_TOKENS.max + tokensFor(2 * FINISHING_CALL_WORDS);
  const lengthCalls = Math.ceil(input.reservedWords / FINISHING_CALL_WORDS);
  const passes = input.humanize ? 4 : 2;
  const repairs = input.finishing.repairCalls;
  return {
    prompt: passes * lengthCalls * callPrompt + repairs * callPrompt,
    completion: passes * reserved + repairs * tokensFor(FINISHING_CALL_WORDS),
  };
}

const higher = (a: string, b: string) => (parseUsd(a) >= parseUsd(b) ? a : b);

/**
 * min: the article is written once at its target length, each step reads the request, its
 * instructions and the least research once, at the model's prices.
 * max: every step writes up to the reserved words and reads the request, all research, its
 * instructions and every earlier step's output, at the dearer of the model's and its fallback's prices.
 * The humanization pass adds one call that reads and rewrites the article, and the finishing work
 * (length control, brief repairs) adds nothing at least and finishingMax at most.
 */
export function costRange(input: CostRangeInput): CostRange {
  const { steps } = input;
  const request = tokensFor(input.requestWords);
  const target = tokensFor(input.targetWords);
  const reserved = tokensFor(input.reservedWords);
  const humanizeMin = input.humanize ? { prompt: target + INSTRUCTION_TOKENS.min, completion: target } : { prompt: 0, completion: 0 };
  const humanizeMax = input.humanize ? { prompt: reserved + INSTRUCTION_TOKENS.max, completion: reserved } : { prompt: 0, completion: 0 };

  const finishing = finishingMax(input, reserved);
  const promptTokens = {
    min: steps * (request + INSTRUCTION_TOKENS.min) + tokensFor(input.researchWords.min) + humanizeMin.prompt,
    max: steps * (request + INSTRUCTION_TOKENS.max + tokensFor(input.researchWords.max)) + (reserved * steps * (steps - 1)) / 2 + humanizeMax.prompt + finishing.prompt,
  };
  const completionTokens = { min: target + humanizeMin.completion, max: steps * reserved + humanizeMax.completion + finishing.completion };

  const dearest = input.fallback && !input.batch
    ? { inputPricePerMillion: higher(input.model.inputPricePerMillion, input.fallback.inputPricePerMillion), outputPricePerMillion: higher(input.model.outputPricePerMillion, input.fallback.outputPricePerMillion) }
    : input.model;
  const low = priceOf(promptTokens.min, completionTokens.min, input.model, input.batch);
  const high = priceOf(promptTokens.max, completionTokens.max, dearest, input.batch);
  return {
    promptTokens,
    completionTokens,
    min: formatUsd((low / MICRO) * MICRO),
    max: formatUsd(((high + MICRO - 1n) / MICRO) * MICRO),
  };
}
