// What went wrong talking to a WordPress site, sorted the way a publishing job acts on it: try
// again later (the site is busy, down or slow) or stop and tell the user (wrong credentials, no
// permission, no such site, a request WordPress refuses). The application password never appears
// in an error: messages come from WordPress or from here, and are scrubbed of it all the same.

export interface WordPressErrorDetails {
  /** True when the same request may succeed later. */
  retryable: boolean;
  /** The HTTP status, when the site answered. */
  status?: number;
  /** WordPress's error code (e.g. "rest_cannot_create"), or this client's: "timeout", "network", "not_json", "not_wordpress". */
  code: string;
  message: string;
  /** How long the site asked to be left alone (Retry-After), in milliseconds. */
  retryAfterMs?: number;
  /** The REST route or page the failed request was for, e.g. "POST wp/v2/posts". */
  request?: string;
}

export class WordPressError extends Error {
  override readonly name = "WordPressError";
  readonly retryable: boolean;
  readonly status?: number;
  readonly code: string;
  readonly retryAfterMs?: number;
  readonly request?: string;

  constructor(details: WordPressErrorDetails) {
    super(details.message);
    this.retryable = details.retryable;
    this.status = details.status;
    this.code = details.code;
    this.retryAfterMs = details.retryAfterMs;
    this.request = details.request;
  }

  toJSON(): WordPressErrorDetails {
    return { retryable: this.retryable, status: this.status, code: this.code, message: this.message, retryAfterMs: this.retryAfterMs, request: this.request };
  }
}

/** Statuses worth asking again: the site is overloaded, down for a moment, or a proxy in front of it gave up. */
export const isRetryableStatus = (status: number) => status === 408 || status === 425 || status === 429 || status >= 500;

/** Retry-After as milliseconds from now: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null, now = Date.now()): number | undefined {
  const value = header?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** `text` with every secret cut out. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join("[redacted]");
  return out;
}

const STATUS_MEANING: Record<number, string> = {
  401: "WordPress rejected the username or application password",
  403: "the WordPress user is not allowed to do this",
  404: "not found on the WordPress site",
};

/** The error of a response WordPress (or something in front of it) answered with a failure status. */
export function errorOfResponse(response: Response, body: unknown, request: string, secrets: readonly string[]): WordPressError {
  const wp = typeof body === "object" && body !== null ? (body as { code?: unknown; message?: unknown }) : {};
  const code = typeof wp.code === "string" ? wp.code : `http_${response.status}`;
  const told = typeof wp.message === "string" ? stripTags(wp.message) : undefined;
  // WordPress's own words for a refused login ("You are not currently logged in.") do not say what to fix.
  const meaning = STATUS_MEANING[response.status];
  const said = meaning ? (told ? `${meaning} (${told})` : meaning) : (told ?? (response.statusText || "request failed"));
  return new WordPressError({
    retryable: isRetryableStatus(response.status),
    status: response.status,
    code,
    message: redact(`${request}: ${response.status} ${code}: ${said}`, secrets),
    retryAfterMs: retryAfterMs(response.headers.get("retry-after")),
    request,
  });
}

/** The error of a request that got no answer: a timeout or a failed connection, both worth another try (a refused address is not). */
export function errorOfFailure(error: unknown, request: string, secrets: readonly string[]): WordPressError {
  // The address guard refused the site (guarded-fetch.ts): asking again changes nothing.
  if (error instanceof Error && error.name === "RefusedRequest") {
    return new WordPressError({ retryable: false, code: "refused_address", message: redact(`${request}: the site's address is not allowed (${error.message})`, secrets), request });
  }
  const timedOut = error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
  const why = error instanceof Error ? error.message : String(error);
  return new WordPressError({
    retryable: true,
    code: timedOut ? "timeout" : "network",
    message: redact(`${request}: ${timedOut ? "no answer in time" : `could not reach the site (${why})`}`, secrets),
    request,
  });
}

// WordPress error messages may carry markup (links to the docs).
const stripTags = (text: string) => text.replace(/<[^>]*>/g, "").replace(/\s+/g, " ").trim();
