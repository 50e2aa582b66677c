// What a provider says about its rate limits, read from the headers OpenAI (and the APIs that
// copy it) send: `x-ratelimit-limit-requests|tokens`, `…-remaining-…`, `…-reset-…` on every
// answer, and `retry-after-ms` / `retry-after` on a 429.

export interface ProviderLimitReport {
  /** Requests per minute the account is allowed (undefined: not said). */
  requestsPerMinute?: number;
  tokensPerMinute?: number;
  remainingRequests?: number;
  remainingTokens?: number;
  /** How long until the budget that ran out refills, when one did (remaining 0); else undefined. */
  exhaustedForMs?: number;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** OpenAI's reset durations ("1s", "6m0s", "120ms", "1.5s", "2h3m4s") in milliseconds; undefined when unreadable. */
export function parseResetDuration(text: string | null | undefined): number | undefined {
  if (!text) return undefined;
  const value = text.trim();
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  let total = 0;
  let matched = "";
  for (const part of value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)) {
    total += Number(part[1]) * UNITS[part[2]!]!;
    matched += part[0];
  }
  return matched === value && matched !== "" ? Math.ceil(total) : undefined;
}

const count = (text: string | null, least: number): number | undefined => {
  const n = Number(text);
  return text !== null && text.trim() !== "" && Number.isFinite(n) && n >= least ? Math.floor(n) : undefined;
};

export function readLimitReport(headers: Headers | undefined): ProviderLimitReport {
  if (!headers) return {};
  const report: ProviderLimitReport = {
    requestsPerMinute: count(headers.get("x-ratelimit-limit-requests"), 1),
    tokensPerMinute: count(headers.get("x-ratelimit-limit-tokens"), 1),
    remainingRequests: count(headers.get("x-ratelimit-remaining-requests"), 0),
    remainingTokens: count(headers.get("x-ratelimit-remaining-tokens"), 0),
  };
  for (const kind of ["requests", "tokens"]) {
    if (headers.get(`x-ratelimit-remaining-${kind}`)?.trim() !== "0") continue;
    const reset = parseResetDuration(headers.get(`x-ratelimit-reset-${kind}`));
    if (reset !== undefined) report.exhaustedForMs = Math.max(report.exhaustedForMs ?? 0, reset);
  }
  return { ...report, ...windowedReport(headers) };
}

const numbers = (text: string | null) => (text ?? "").split(",").map((part) => Number(part.trim()));

/**
 * Brave's form: `X-RateLimit-Limit: 1, 15000` (per second, per month), `X-RateLimit-Remaining`
 * and `X-RateLimit-Reset` (seconds) for the same windows. The first window's limit is the pace;
 * any window left at 0 is spent until its reset.
 */
function windowedReport(headers: Headers): ProviderLimitReport {
  const limit = headers.get("x-ratelimit-limit");
  if (!limit || !/^\s*\d+(\s*,\s*\d+)*\s*$/.test(limit)) return {};
  const [perSecond] = numbers(limit);
  const remaining = numbers(headers.get("x-ratelimit-remaining"));
  const resets = numbers(headers.get("x-ratelimit-reset"));
  let exhaustedForMs: number | undefined;
  remaining.forEach((left, i) => {
    if (left === 0 && Number.isFinite(resets[i])) exhaustedForMs = Math.max(exhaustedForMs ?? 0, resets[i]! * 1000);
  });
  return { requestsPerMinute: perSecond! > 0 ? perSecond! * 60 : undefined, ...(exhaustedForMs !== undefined ? { exhaustedForMs } : {}) };
}

/**
 * How long a 429 asks to wait: `retry-after-ms`, else `retry-after` (seconds or an HTTP date),
 * else the reset of the exhausted budget; undefined when the answer says nothing.
 */
export function retryDelayOf(headers: Headers | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const ms = Number(headers.get("retry-after-ms"));
  if (headers.get("retry-after-ms") !== null && Number.isFinite(ms) && ms >= 0) return Math.ceil(ms);
  const after = headers.get("retry-after");
  if (after !== null) {
    const seconds = Number(after);
    if (Number.isFinite(seconds) && seconds >= 0) return Math.ceil(seconds * 1000);
    const date = Date.parse(after);
    if (!Number.isNaN(date)) return Math.max(0, date - now);
  }
  return readLimitReport(headers).exhaustedForMs;
}
