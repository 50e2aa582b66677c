// The estimate's cost range counts the finishing work a built-in workflow's article may take
// (length control's passes, the brief repairs): nothing at least, its documented allowance at most.
import { expect, test } from "bun:test";
import { costRange, INSTRUCTION_TOKENS, tokensFor, type CostRangeInput } from "../../gateway/src/articles/cost-range.ts";

const base: CostRangeInput = {
  targetWords: 3_000,
  reservedWords: 3_600,
  steps: 5,
  requestWords: 10,
  researchWords: { min: 0, max: 0 },
  humanize: false,
  model: { inputPricePerMillion: "0.15", outputPricePerMillion: "0.60" },
  batch: false,
};

test("length control and repair calls widen the top of the range, never the bottom", () => {
  const without = costRange(base);
  const withFinishing = costRange({ ...base, finishing: { repairCalls: 3 } });
  expect(withFinishing.promptTokens.min).toBe(without.promptTokens.min);
  expect(withFinishing.completionTokens.min).toBe(without.completionTokens.min);
  expect(withFinishing.min).toBe(without.min);
  // Two passes of ceil(3,600 / 450) = 8 calls and 3 repairs, each reading up to 900 words and its instructions.
  const call = INSTRUCTION_TOKENS.max + tokensFor(900);
  expect(withFinishing.promptTokens.max - without.promptTokens.max).toBe((2 * 8 + 3) * call);
  expect(withFinishing.completionTokens.max - without.completionTokens.max).toBe(2 * tokensFor(3_600) + 3 * tokensFor(450));
  expect(Number(withFinishing.max)).toBeGreaterThan(Number(without.max));
});

test("more repair calls and the humanization pass's own round cost more at most", () => {
  const three = costRange({ ...base, finishing: { repairCalls: 3 } });
  const none = costRange({ ...base, finishing: { repairCalls: 0 } });
  expect(none.promptTokens.max).toBeLessThan(three.promptTokens.max);
  const humanized = costRange({ ...base, humanize: true, finishing: { repairCalls: 3 } });
  const humanizedAlone = costRange({ ...base, humanize: true });
  expect(humanized.completionTokens.max - humanizedAlone.completionTokens.max).toBe(4 * tokensFor(3_600) + 3 * tokensFor(450));
});
