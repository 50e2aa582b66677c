// The API's error answers as classes, so a caller tells them apart with instanceof and reads their
// fields typed: the 422 field map, 429's retry_after. Each keeps the fields of the body it came
// from, so it still matches the generated error types (ValidationError, GateError, PlainError).

/** Any 4xx or 5xx answer: its status, message and the request id to quote to support (its X-Request-Id header). */
export class ApiError extends Error {
  override readonly name: string = "ApiError";
  readonly status: number;
  readonly request_id?: string;
  /** The answer's body as it came (parsed JSON, or the text when it was not JSON). */
  readonly body: unknown;

  constructor(status: number, body: unknown, requestId?: string | null) {
    const fields = objectOf(body);
    super(typeof fields.message === "string" ? fields.message : `HTTP ${status}`);
    this.status = status;
    this.body = body;
    if (requestId) this.request_id = requestId;
  }
}

/** 422: every problem at once, as messages per field ("keywords.2" for an item of a list). */
export class ValidationFailed extends ApiError {
  override readonly name = "ValidationFailed";
  readonly errors: Record<string, string[]>;

  constructor(status: number, body: unknown, requestId?: string | null) {
    super(status, body, requestId);
    this.errors = objectOf(objectOf(body).errors) as Record<string, string[]>;
  }
}

export type GateCode = "UNAUTHENTICATED" | "NO_ACTIVE_SUBSCRIPTION" | "RATE_LIMIT_EXCEEDED";

/** 401, 402 or 429 from the gate: no valid key, no active subscription, or a full rate-limit window. */
export class GateRefused extends ApiError {
  override readonly name: string = "GateRefused";
  readonly error: string;
  readonly code: GateCode;

  constructor(status: number, body: unknown, requestId?: string | null) {
    super(status, body, requestId);
    const fields = objectOf(body);
    this.error = String(fields.error ?? "");
    this.code = fields.code as GateCode;
  }
}

/** 429: a minute, hour or day window is full; the same call succeeds after retry_after seconds. */
export class RateLimited extends GateRefused {
  override readonly name = "RateLimited";
  readonly retry_after: number;

  constructor(status: number, body: unknown, requestId: string | null, retryAfterHeader: string | null) {
    super(status, body, requestId);
    const inBody = objectOf(body).retry_after;
    this.retry_after = typeof inBody === "number" ? inBody : Number(retryAfterHeader ?? 1) || 1;
  }
}

/** The error an answer stands for. */
export function apiErrorOf(response: Response, body: unknown): ApiError {
  const { status } = response;
  const requestId = response.headers.get("X-Request-Id");
  if (status === 429) return new RateLimited(status, body, requestId, response.headers.get("Retry-After"));
  if (status === 401 || status === 402) return new GateRefused(status, body, requestId);
  if (status === 422 && typeof objectOf(body).errors === "object") return new ValidationFailed(status, body, requestId);
  return new ApiError(status, body, requestId);
}

function objectOf(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
