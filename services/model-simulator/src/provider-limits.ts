// The simulated provider's limits and bad days, per simulator instance, so whole-stack tests can
// check a runner that paces its calls against a rate-limited, flaky provider such as OpenAI's API.
//
// Rate limits. requests_per_minute (RPM) and tokens_per_minute (TPM) are each optional (null =
// unlimited) and enforced as OpenAI enforces them, over seconds rather than whole minutes: each is
// a bucket refilling continuously at limit/60 per second that holds burst_seconds' worth
// (limit/60 × burst_seconds, at least 1; burst_seconds is 1 unless set). A call costs 1 request and,
// in tokens, its prompt-token estimate (the one usage.prompt_tokens reports) plus its
// max_completion_tokens or max_tokens. A call costing more tokens than the bucket holds is admitted
// when the bucket is full and leaves it in debt, so large calls are slowed rather than refused
// forever. A refused call takes nothing from either bucket. In any window of W seconds a bucket
// admits at most its capacity + limit/60 × W, so peak_per_minute ≤ RPM + capacity.
//
// Where and in what order. POST /v1/chat/completions, POST /v1/images/generations and POST
// /v1/batches (1 request, no tokens): an outage answers first (counted as failed); then the limits
// answer 429 (counted as rate_limited); then a slow period delays the call; then it is answered
// (counted as admitted, whatever its status).
//
// Headers. While a limit is set, every response of those routes carries x-ratelimit-limit-*,
// x-ratelimit-remaining-* and x-ratelimit-reset-* for requests and/or tokens (only the limits set).
// Remaining is the bucket's fill as a share of the per-minute limit (the limit when full, 0 when
// empty); reset is the time until the bucket is full, in OpenAI's format (0s, 120ms, 1.5s, 6m0s).
// A 429 carries retry-after (whole seconds, at least 1), retry-after-ms (the wait until the call
// would be admitted) and OpenAI's body:
//   {"error":{"message":"Rate limit reached for sim-fast in organization org-simulator on requests
//   per min (RPM): Limit 600, Used 600, Requested 1. Please try again in 91ms. Visit
//   https://platform.openai.com/account/rate-limits to learn more.","type":"requests","param":null,
//   "code":"rate_limit_exceeded"}}
// ("on tokens per min (TPM)" and type "tokens" for the token limit). headers: false drops the
// x-ratelimit-* headers only: the limits and retry-after stay, so a runner can learn from 429s alone.
//
// Bad days. An outage answers every such call with its status (503 unless given, any 5xx) and
// OpenAI's server_error body until it ends; a slow period delays each such call by delay_ms.
//
// Control (JSON, snake_case):
//   GET /_sim/provider → {"limits": {"requests_per_minute": n|null, "tokens_per_minute": n|null,
//     "burst_seconds": n, "headers": bool}, "outage": {"status": n, "until": ms}|null,
//     "slow": {"delay_ms": n, "until": ms}|null, "counts": {"admitted": n, "rate_limited": n,
//     "failed": n, "first_admitted_at": ms|null, "last_admitted_at": ms|null, "peak_per_second": n,
//     "peak_per_minute": n}}   (ms since the epoch; peaks: most calls admitted in any sliding 1 s / 60 s)
//   PUT /_sim/provider with any of requests_per_minute, tokens_per_minute (positive integer or null),
//     burst_seconds (positive number), headers (boolean), outage ({"status": 500-599, "duration_ms": n}
//     or null to end it), slow ({"delay_ms": n, "duration_ms": n} or null) → the state as GET answers.
//     Setting a limit (even to its current value) or burst_seconds refills the bucket(s) concerned.
//     Bad input → 400 {"error": "..."} and nothing changes.
//   DELETE /_sim/provider/counts → the state with the counts at zero.
// startSimulator({ provider }) takes the same settings in camelCase; main.ts reads
// SIMULATOR_REQUESTS_PER_MINUTE and SIMULATOR_TOKENS_PER_MINUTE.

import { jsonResponse, openAIErrorBody } from "./openai-errors.ts";

export interface ProviderSettings {
  requestsPerMinute?: number | null;
  tokensPerMinute?: number | null;
  burstSeconds?: number;
  headers?: boolean;
  outage?: { status?: number; durationMs: number } | null;
  slow?: { delayMs: number; durationMs: number } | null;
}

/** What a call asks of the limits: the model its 429 names, and its cost in tokens. */
export interface ProviderCall {
  model: string;
  tokens: number;
}

export interface ProviderState {
  limits: { requests_per_minute: number | null; tokens_per_minute: number | null; burst_seconds: number; headers: boolean };
  outage: { status: number; until: number } | null;
  slow: { delay_ms: number; until: number } | null;
  counts: ProviderCounts & { peak_per_second: number; peak_per_minute: number };
}

interface ProviderCounts {
  admitted: number;
  rate_limited: number;
  failed: number;
  first_admitted_at: number | null;
  last_admitted_at: number | null;
}

export class ProviderSettingsError extends Error {}

const ORGANIZATION = "org-simulator";
// Bun's idle timeout (255 s) would cut a longer hold.
const MAX_DELAY_MS = 240_000;
// Absorbs floating-point rounding in refills, so a caller that waited retry-after-ms is not refused by a hair.
const EPSILON = 1e-6;

const OUTAGE_MESSAGES: Record<number, string> = {
  500: "The server had an error while processing your request. Sorry about that!",
  502: "Bad gateway.",
  503: "The server is overloaded or not ready yet.",
  504: "Gateway timeout.",
};

/** A per-minute limit as a bucket refilling continuously; times are from a monotonic clock. */
class RateBucket {
  private readonly capacity: number;
  private readonly perMs: number;
  private level: number;
  private at: number;

  constructor(
    readonly limit: number,
    burstSeconds: number,
    now: number,
  ) {
    this.perMs = limit / 60_000;
    this.capacity = Math.max(1, (limit / 60) * burstSeconds);
    this.level = this.capacity;
    this.at = now;
  }

  /** Ms until `cost` can be taken, 0 when it can be now; a cost above the capacity waits for a full bucket. */
  waitFor(cost: number, now: number): number {
    this.refill(now);
    const needed = Math.min(cost, this.capacity);
    return cost === 0 || this.level >= needed - EPSILON ? 0 : (needed - this.level) / this.perMs;
  }

  take(cost: number): void {
    this.level -= cost;
  }

  /** The fill as a share of the per-minute limit, which is how OpenAI's remaining headers count. */
  remaining(now: number): number {
    this.refill(now);
    return Math.max(0, Math.floor((this.level / this.capacity) * this.limit + EPSILON));
  }

  msUntilFull(now: number): number {
    this.refill(now);
    return Math.max(0, (this.capacity - this.level) / this.perMs);
  }

  private refill(now: number): void {
    this.level = Math.min(this.capacity, this.level + (now - this.at) * this.perMs);
    this.at = now;
  }
}

/** The busiest sliding 1 s and 60 s windows of admissions, from the admission times of the last minute. */
class AdmissionPeaks {
  perSecond = 0;
  perMinute = 0;
  private times: number[] = [];
  private minuteStart = 0;
  private secondStart = 0;

  record(now: number): void {
    this.times.push(now);
    while (this.times[this.minuteStart] <= now - 60_000) this.minuteStart++;
    while (this.times[this.secondStart] <= now - 1_000) this.secondStart++;
    this.perSecond = Math.max(this.perSecond, this.times.length - this.secondStart);
    this.perMinute = Math.max(this.perMinute, this.times.length - this.minuteStart);
    // Dropping the expired head only once it is most of the array keeps each record O(1) amortised.
    if (this.minuteStart > 1024 && this.minuteStart * 2 > this.times.length) {
      this.times = this.times.slice(this.minuteStart);
      this.secondStart -= this.minuteStart;
      this.minuteStart = 0;
    }
  }
}

const freshCounts = (): ProviderCounts => ({ admitted: 0, rate_limited: 0, failed: 0, first_admitted_at: null, last_admitted_at: null });

export class ProviderLimits {
  private burstSeconds = 1;
  private headers = true;
  private requests: RateBucket | null = null;
  private tokens: RateBucket | null = null;
  private outage: { status: number; until: number } | null = null;
  private slow: { delayMs: number; until: number } | null = null;
  private counts = freshCounts();
  private peaks = new AdmissionPeaks();

  /** Applies the settings given (others stay); throws ProviderSettingsError, changing nothing, on a bad one. */
  configure(settings: ProviderSettings): void {
    const problem = settingsProblem(settings);
    if (problem) throw new ProviderSettingsError(problem);
    const now = performance.now();
    const burstChanged = settings.burstSeconds !== undefined;
    if (burstChanged) this.burstSeconds = settings.burstSeconds!;
    // A new bucket starts full, so setting a limit (or the burst) refills it.
    const refilled = (given: number | null | undefined, bucket: RateBucket | null) => {
      if (given === undefined && !burstChanged) return bucket;
      const limit = given === undefined ? (bucket?.limit ?? null) : given;
      return limit === null ? null : new RateBucket(limit, this.burstSeconds, now);
    };
    this.requests = refilled(settings.requestsPerMinute, this.requests);
    this.tokens = refilled(settings.tokensPerMinute, this.tokens);
    if (settings.headers !== undefined) this.headers = settings.headers;
    if (settings.outage !== undefined) {
      this.outage = settings.outage && { status: settings.outage.status ?? 503, until: Date.now() + settings.outage.durationMs };
    }
    if (settings.slow !== undefined) {
      this.slow = settings.slow && { delayMs: settings.slow.delayMs, until: Date.now() + settings.slow.durationMs };
    }
  }

  state(): ProviderState {
    const outage = this.activeOutage();
    const slow = this.activeSlow();
    return {
      limits: {
        requests_per_minute: this.requests?.limit ?? null,
        tokens_per_minute: this.tokens?.limit ?? null,
        burst_seconds: this.burstSeconds,
        headers: this.headers,
      },
      outage: outage && { status: outage.status, until: outage.until },
      slow: slow && { delay_ms: slow.delayMs, until: slow.until },
      counts: { ...this.counts, peak_per_second: this.peaks.perSecond, peak_per_minute: this.peaks.perMinute },
    };
  }

  resetCounts(): void {
    this.counts = freshCounts();
    this.peaks = new AdmissionPeaks();
  }

  /** Answers a call as the provider would: outage, then the limits, then the slow period, then `answer`. */
  async serve(call: ProviderCall, answer: () => Promise<Response>): Promise<Response> {
    const now = performance.now();
    const refused = this.refusal(call, now);
    const headers = this.limitHeaders(now);
    let response: Response;
    if (refused) {
      response = refused;
    } else {
      const delayMs = this.activeSlow()?.delayMs ?? 0;
      if (delayMs > 0) await Bun.sleep(delayMs);
      response = await answer();
    }
    for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
    return response;
  }

  /** The outage or 429 answer for a call, or null after admitting it (taking its cost and counting it). */
  private refusal(call: ProviderCall, now: number): Response | null {
    const outage = this.activeOutage();
    if (outage) {
      this.counts.failed++;
      return jsonResponse(openAIErrorBody(OUTAGE_MESSAGES[outage.status] ?? OUTAGE_MESSAGES[500], "server_error", null), outage.status);
    }
    const requestWait = this.requests?.waitFor(1, now) ?? 0;
    const tokenWait = this.tokens?.waitFor(call.tokens, now) ?? 0;
    if (requestWait > 0 || tokenWait > 0) {
      this.counts.rate_limited++;
      // The call passes once both buckets allow it, so the longer wait is the one to report.
      return tokenWait > requestWait
        ? this.rateLimited(call, this.tokens!, "tokens", call.tokens, tokenWait, now)
        : this.rateLimited(call, this.requests!, "requests", 1, requestWait, now);
    }
    this.requests?.take(1);
    this.tokens?.take(call.tokens);
    const at = Date.now();
    this.counts.admitted++;
    this.counts.first_admitted_at ??= at;
    this.counts.last_admitted_at = at;
    this.peaks.record(now);
    return null;
  }

  private rateLimited(call: ProviderCall, bucket: RateBucket, kind: "requests" | "tokens", requested: number, waitMs: number, now: number): Response {
    const wait = Math.ceil(waitMs);
    const per = kind === "requests" ? "requests per min (RPM)" : "tokens per min (TPM)";
    const used = bucket.limit - bucket.remaining(now);
    const message =
      `Rate limit reached for ${call.model} in organization ${ORGANIZATION} on ${per}: Limit ${bucket.limit}, Used ${used}, Requested ${requested}. ` +
      `Please try again in ${openAIDuration(wait)}. Visit https://platform.openai.com/account/rate-limits to learn more.`;
    return jsonResponse(openAIErrorBody(message, kind, "rate_limit_exceeded"), 429, {
      "retry-after": String(Math.max(1, Math.ceil(wait / 1000))),
      "retry-after-ms": String(wait),
    });
  }

  private limitHeaders(now: number): Record<string, string> {
    const headers: Record<string, string> = {};
    if (!this.headers) return headers;
    for (const [kind, bucket] of [["requests", this.requests], ["tokens", this.tokens]] as const) {
      if (!bucket) continue;
      headers[`x-ratelimit-limit-${kind}`] = String(bucket.limit);
      headers[`x-ratelimit-remaining-${kind}`] = String(bucket.remaining(now));
      headers[`x-ratelimit-reset-${kind}`] = openAIDuration(bucket.msUntilFull(now));
    }
    return headers;
  }

  private activeOutage() {
    if (this.outage && Date.now() >= this.outage.until) this.outage = null;
    return this.outage;
  }

  private activeSlow() {
    if (this.slow && Date.now() >= this.slow.until) this.slow = null;
    return this.slow;
  }
}

/** A wait in OpenAI's (Go's) duration format, to the millisecond rounded up: 0s, 120ms, 1.5s, 6m0s, 1h0m0s. */
export function openAIDuration(ms: number): string {
  const whole = Math.ceil(ms - EPSILON);
  if (whole <= 0) return "0s";
  if (whole < 1000) return `${whole}ms`;
  const hours = Math.floor(whole / 3_600_000);
  const minutes = Math.floor((whole % 3_600_000) / 60_000);
  const seconds = (whole % 60_000) / 1000;
  return `${hours ? `${hours}h` : ""}${hours || minutes ? `${minutes}m` : ""}${seconds}s`;
}

const SETTING_FIELDS = ["requests_per_minute", "tokens_per_minute", "burst_seconds", "headers", "outage", "slow"];
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** A PUT /_sim/provider body as settings; configure checks the values, this only the shape and names. */
export function settingsFromJson(body: unknown): ProviderSettings {
  if (!isObject(body)) throw new ProviderSettingsError("the body must be a JSON object");
  // A misspelt setting must not pass as "no change".
  const unknownField = (value: Record<string, unknown>, known: string[]) => Object.keys(value).find((key) => !known.includes(key));
  const stray = unknownField(body, SETTING_FIELDS);
  if (stray) throw new ProviderSettingsError(`unknown setting '${stray}' (known: ${SETTING_FIELDS.join(", ")})`);
  const { outage, slow } = body;
  if (outage !== undefined && outage !== null && (!isObject(outage) || unknownField(outage, ["status", "duration_ms"]))) {
    throw new ProviderSettingsError("outage must be {status, duration_ms} or null");
  }
  if (slow !== undefined && slow !== null && (!isObject(slow) || unknownField(slow, ["delay_ms", "duration_ms"]))) {
    throw new ProviderSettingsError("slow must be {delay_ms, duration_ms} or null");
  }
  // Values pass through unchecked here: configure checks every one of them.
  return {
    requestsPerMinute: body.requests_per_minute as number | null | undefined,
    tokensPerMinute: body.tokens_per_minute as number | null | undefined,
    burstSeconds: body.burst_seconds as number | undefined,
    headers: body.headers as boolean | undefined,
    outage: isObject(outage) ? { status: outage.status as number | undefined, durationMs: outage.duration_ms as number } : (outage as null | undefined),
    slow: isObject(slow) ? { delayMs: slow.delay_ms as number, durationMs: slow.duration_ms as number } : (slow as null | undefined),
  };
}

function settingsProblem(settings: ProviderSettings): string | null {
  const perMinute = (value: unknown) => value === undefined || value === null || (Number.isSafeInteger(value) && (value as number) > 0);
  const positive = (value: unknown) => typeof value === "number" && Number.isFinite(value) && value > 0;
  if (!perMinute(settings.requestsPerMinute)) return "requests_per_minute must be a positive integer or null";
  if (!perMinute(settings.tokensPerMinute)) return "tokens_per_minute must be a positive integer or null";
  if (settings.burstSeconds !== undefined && !positive(settings.burstSeconds)) return "burst_seconds must be a positive number";
  if (settings.headers !== undefined && typeof settings.headers !== "boolean") return "headers must be true or false";
  const { outage, slow } = settings;
  if (outage) {
    if (outage.status !== undefined && !(Number.isInteger(outage.status) && outage.status >= 500 && outage.status <= 599)) {
      return "outage.status must be an HTTP status from 500 to 599";
    }
    if (!positive(outage.durationMs)) return "outage.duration_ms must be a positive number of milliseconds";
  }
  if (slow) {
    if (!(Number.isInteger(slow.delayMs) && slow.delayMs >= 0 && slow.delayMs <= MAX_DELAY_MS)) {
      return `slow.delay_ms must be a whole number of milliseconds from 0 to ${MAX_DELAY_MS}`;
    }
    if (!positive(slow.durationMs)) return "slow.duration_ms must be a positive number of milliseconds";
  }
  return null;
}
