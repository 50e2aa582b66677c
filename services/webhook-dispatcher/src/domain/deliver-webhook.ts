// One delivery attempt: a POST of the JSON body to the receiver through the SSRF guard, reduced
// to what the delivery log keeps (status code or error, duration) and whether it counts as a
// success. Never throws: every way an attempt can end is a result.
import { safeRequest, SafeHttpError, type HostResolver, type SafeRequestOptions } from "../../../kit/src/safe-http.ts";

export interface DeliveryOptions {
  /** ALLOW_PRIVATE_URLS: skip the address check (local development and tests only). */
  allowPrivate: boolean;
  timeoutMs: number;
  /** Receivers answer with a short acknowledgement; anything longer is cut off as a failure. */
  maxResponseBytes?: number;
  resolveHost?: HostResolver;
  /** Where a failure's detail (the address the receiver's name resolved to) goes; the delivery log never has it. */
  logger?: SafeRequestOptions["logger"];
  /** Keep the start of the receiver's answer, this many characters, for a delivery log that shows it. */
  keepExcerpt?: number;
}

export interface AttemptResult {
  succeeded: boolean;
  /** The URL may never be contacted (refused address or not http/https): retrying cannot help. */
  refused: boolean;
  statusCode?: number;
  error?: string;
  durationMs: number;
  attemptedAt: Date;
  /** The start of the answer's body, when asked for (keepExcerpt). */
  excerpt?: string;
}

const MAX_RESPONSE_BYTES = 1024 * 1024;

export async function deliverWebhook(url: string, body: string, headers: Record<string, string>, opts: DeliveryOptions): Promise<AttemptResult> {
  const attemptedAt = new Date();
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  try {
    const response = await safeRequest(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body,
      allowPrivate: opts.allowPrivate,
      timeoutMs: opts.timeoutMs,
      maxResponseBytes: opts.maxResponseBytes ?? MAX_RESPONSE_BYTES,
      // A redirect is an answer, not a success: following it could carry the article elsewhere.
      followRedirects: 0,
      // Deliveries go to few receivers many times over: a new connection each would cost more than the POST.
      keepAlive: true,
      resolveHost: opts.resolveHost,
      logger: opts.logger,
    });
    const status = response.status;
    const durationMs = elapsed();
    const excerpt = opts.keepExcerpt ? response.body.subarray(0, opts.keepExcerpt * 4).toString("utf8").slice(0, opts.keepExcerpt) : undefined;
    if (status >= 200 && status < 300) return { succeeded: true, refused: false, statusCode: status, durationMs, attemptedAt, ...(excerpt !== undefined ? { excerpt } : {}) };
    const location = response.headers.location;
    const error =
      status >= 300 && status < 400
        ? `receiver answered ${status}; redirects are not followed${location ? ` (location: ${location})` : ""}`
        : `receiver answered ${status}`;
    return { succeeded: false, refused: false, statusCode: status, error, durationMs, attemptedAt, ...(excerpt !== undefined ? { excerpt } : {}) };
  } catch (err) {
    const durationMs = elapsed();
    if (err instanceof SafeHttpError) {
      const refused = err.reason === "refused-address" || err.reason === "bad-url";
      return { succeeded: false, refused, error: err.message, durationMs, attemptedAt };
    }
    return { succeeded: false, refused: false, error: `unexpected: ${(err as Error).message}`, durationMs, attemptedAt };
  }
}
