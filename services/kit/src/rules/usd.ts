// Exact USD arithmetic for prices and costs. Floats would drift when thousands of small step
// costs are added up, so amounts are integers of pico-dollars (10^-12 USD) and travel as
// decimal strings.
// The runner prices model calls with these and the gateway prices estimates with them, so both
// processes share this one copy.

const SCALE_DIGITS = 12;
const SCALE = 10n ** BigInt(SCALE_DIGITS);
const DECIMAL = /^\d+(\.\d+)?$/;

export type Picodollars = bigint;

export function isUsdDecimal(value: string): boolean {
  return DECIMAL.test(value) && (value.split(".")[1]?.length ?? 0) <= SCALE_DIGITS;
}

/** "2.50" → 2_500_000_000_000n. Throws on anything but a plain non-negative decimal. */
export function parseUsd(value: string): Picodollars {
  const trimmed = value.trim();
  if (!DECIMAL.test(trimmed)) throw new Error(`not a decimal amount: "${value}"`);
  const [whole, fraction = ""] = trimmed.split(".");
  const digits = fraction.slice(0, SCALE_DIGITS).padEnd(SCALE_DIGITS, "0");
  return BigInt(whole) * SCALE + BigInt(digits);
}

/** Shortest exact decimal with at least two places: 0n → "0.00", 1_230_000_000n → "0.00123". */
export function formatUsd(amount: Picodollars): string {
  const whole = amount / SCALE;
  const fraction = (amount % SCALE).toString().padStart(SCALE_DIGITS, "0").replace(/0+$/, "").padEnd(2, "0");
  return `${whole}.${fraction}`;
}

export interface ModelPrices {
  inputPricePerMillion: string;
  outputPricePerMillion: string;
}

/** Cost of one call: tokens at the model's per-million prices, times `share` (batch discounts). */
export function costOfUsage(prices: ModelPrices, usage: { promptTokens: number; completionTokens: number }, share: { numerator: bigint; denominator: bigint } = { numerator: 1n, denominator: 1n }): Picodollars {
  const raw = BigInt(usage.promptTokens) * parseUsd(prices.inputPricePerMillion) + BigInt(usage.completionTokens) * parseUsd(prices.outputPricePerMillion);
  return (raw * share.numerator) / (1_000_000n * share.denominator);
}

export const sumUsd = (amounts: Iterable<Picodollars>): Picodollars => {
  let total = 0n;
  for (const amount of amounts) total += amount;
  return total;
};
