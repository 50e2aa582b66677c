// What one model call came to, as every record of a call keeps it (a step's checkpoint, its line
// in the cost breakdown, a finishing task's line, the reply itself).
import type { Picodollars } from "../../../kit/src/rules/usd.ts";

export interface CallAccount {
  /** The model that answered. */
  model: string;
  /** The fallback answered because the requested model could not. */
  usedFallback: boolean;
  promptTokens: number;
  completionTokens: number;
  cost: Picodollars;
  /** Milliseconds the call waited for its provider (its turn in the budget, a rate limit, an outage); 0 when batched or not finished. */
  waitedMs: number;
}
