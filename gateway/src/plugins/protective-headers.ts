// Protective headers on every answer of the HTTP API, as OWASP's REST security guidance lists
// them, set on the response as it leaves the app so that errors (401, 404, 422, 429, 500), the
// event stream and the health probes carry them as the routes' own answers do:
// - Cache-Control: no-store on anything that may carry a tenant's data (every JSON answer and the
//   event stream; any answer that sets no caching of its own), so no shared proxy or browser
//   keeps an article, a key or a destination. Only answers that choose their own caching keep it:
//   images (public, immutable: they are embedded in published posts) and the docs' script.
// - X-Content-Type-Options: nosniff: a browser takes the content type as sent.
// - Content-Security-Policy: frame-ancestors 'none' where the answer has no policy of its own: an
//   answer is never to be framed.
// - Strict-Transport-Security when the API's public address (PUBLIC_BASE_URL) is https://: a
//   browser that has seen it once never again sends a request, or a key, over plain http. Only
//   the gateway's own host: includeSubDomains is for whoever runs the domain to decide.
import { envOptional, type Env } from "../../../services/kit/src/config.ts";

const STRICT_TRANSPORT = "max-age=31536000";

/** Whether answers carry Strict-Transport-Security: the public address is https. */
export function strictTransport(env: Env): boolean {
  return envOptional(env, "PUBLIC_BASE_URL")?.startsWith("https://") === true;
}

/** Whether the answer may carry a tenant's data and must not be stored anywhere. */
function uncacheable(headers: Headers): boolean {
  const type = headers.get("content-type") ?? "";
  return !headers.has("cache-control") || type.includes("json") || type.startsWith("text/event-stream");
}

function protect(response: Response, hsts: boolean): Response {
  let answer = response;
  const set = (name: string, value: string) => {
    try {
      answer.headers.set(name, value);
    } catch {
      // A response whose headers are fixed (one fetched from elsewhere) is copied.
      answer = new Response(answer.body, answer);
      answer.headers.set(name, value);
    }
  };
  const headers = answer.headers;
  if (uncacheable(headers)) set("cache-control", headers.get("content-type")?.startsWith("text/event-stream") ? "no-store, no-transform" : "no-store");
  set("x-content-type-options", "nosniff");
  if (!headers.has("content-security-policy")) set("content-security-policy", "frame-ancestors 'none'");
  if (hsts) set("strict-transport-security", STRICT_TRANSPORT);
  return answer;
}

/** The app's fetch wrapped so that every answer carries the headers (for Elysia's `wrap`). */
export function protectiveHeaders(opts: { hsts: boolean }) {
  // The wrapper is asked for on every request: the wrapped fetch is made once per inner fetch.
  let inner: ((request: Request) => unknown) | undefined;
  let outer: ((request: Request) => unknown) | undefined;
  const wrapped = (fetch: (request: Request) => unknown) => (request: Request) => {
    const result = fetch(request) as Response | Promise<Response>;
    return result instanceof Promise ? result.then((response) => protect(response, opts.hsts)) : protect(result, opts.hsts);
  };
  return (fetch: (request: Request) => unknown) => (fetch === inner ? outer! : ((inner = fetch), (outer = wrapped(fetch))));
}
