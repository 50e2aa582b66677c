// The `fetch` the publishing clients use: every request to a customer's site goes through the
// same address guard as webhooks (kit/safe-http.ts: resolved once, private and internal addresses
// refused, each redirect hop judged again), so a destination's address cannot reach inside the
// cluster; nor, outside development (ALLOW_PRIVATE_URLS), to a plain http address. A refused
// address is a permanent failure, not one to retry.
import { safeRequest, SafeHttpError, type SafeRequestOptions } from "../../../kit/src/safe-http.ts";

export interface GuardOptions {
  /** ALLOW_PRIVATE_URLS: local development and tests. */
  allowPrivate: boolean;
  maxResponseBytes?: number;
  /** Where a refusal's detail (the address the site's name resolved to) goes; never the site's owner. */
  logger?: SafeRequestOptions["logger"];
}

/** Raised for a request the guard refused (private address, bad URL): not worth another try. */
export class RefusedRequest extends Error {
  override readonly name = "RefusedRequest";
}

async function bodyBytes(body: BodyInit | null | undefined): Promise<Uint8Array | string | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string" || body instanceof Uint8Array) return body;
  return new Uint8Array(await new Response(body).arrayBuffer());
}

export function guardedFetch(options: GuardOptions): typeof fetch {
  const guarded = async (input: RequestInfo | URL, init: RequestInit = {}): Promise<Response> => {
    const url = input instanceof Request ? input.url : String(input);
    const headers = Object.fromEntries(new Headers(init.headers).entries());
    // Every request to a site carries its credential: over plain http it would cross the network in
    // clear. Destinations are made https-only (domain/destinations.ts); this holds for older ones too.
    if (!options.allowPrivate && URL.canParse(url) && new URL(url).protocol === "http:") {
      throw new RefusedRequest(`${new URL(url).origin} is plain http, which would send the credential in clear: the site must be https://`);
    }
    const started = Date.now();
    // safeRequest takes a duration, not the caller's signal: the clients' own budgets (30 s, uploads 60 s) are matched here.
    const timeoutMs = init.body ? 60_000 : 30_000;
    try {
      const response = await safeRequest(url, {
        method: init.method ?? "GET",
        headers,
        body: await bodyBytes(init.body),
        allowPrivate: options.allowPrivate,
        followRedirects: init.redirect === "manual" ? 0 : 5,
        timeoutMs,
        maxResponseBytes: options.maxResponseBytes ?? 20 * 1024 * 1024,
        keepAlive: true,
        logger: options.logger,
      });
      const answer = new Response(response.status === 204 || response.status === 304 ? null : new Uint8Array(response.body), { status: response.status, headers: response.headers });
      Object.defineProperty(answer, "url", { value: response.url });
      return answer;
    } catch (error) {
      if (error instanceof SafeHttpError && (error.reason === "refused-address" || error.reason === "bad-url")) throw new RefusedRequest(error.message);
      if (error instanceof SafeHttpError && error.reason === "timeout") throw Object.assign(new Error(`no answer within ${Date.now() - started} ms`), { name: "TimeoutError" });
      throw error;
    }
  };
  return guarded as typeof fetch;
}
