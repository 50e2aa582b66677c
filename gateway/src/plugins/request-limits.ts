// Size limits of a request (docs/api.md, Behaviour): checked before routing and authentication (a
// request hook applies to the whole app), so an oversized request costs nothing further and is
// answered in the spec's plain error shape.
import { Elysia } from "elysia";
import { plainError } from "../errors.ts";
import { REQUEST_MESSAGE_BYTES } from "../../../services/kit/src/message-limits.ts";

export const REQUEST_LIMITS = {
  /** A JSON body: far above the largest valid article or step, whose text fields are bounded; a gRPC request message alike. */
  bodyBytes: REQUEST_MESSAGE_BYTES,
  /** Arrays and objects inside one another in a JSON body (a JSON schema needs a few dozen at most). */
  bodyDepth: 100,
  /** Path and query string together. */
  urlBytes: 8 * 1024,
  /** Every header name and value together. */
  headerBytes: 32 * 1024,
  /**
   * Bun's own limit on a request's head (line and headers), which it answers with an empty 431
   * before the gateway sees the request: raised far above the two above so that they answer.
   */
  serverHeadBytes: 16 * 1024 * 1024,
} as const;

const KIB = (bytes: number) => `${bytes / 1024} KiB`;

export const bodyTooLarge = () => plainError(413, `The request body is larger than ${KIB(REQUEST_LIMITS.bodyBytes)}.`);

/** The request target's length (path and query) without scheme and host. */
function targetLength(url: string): number {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  return start < 0 ? 0 : url.length - start;
}

function headerLength(headers: Headers): number {
  let n = 0;
  headers.forEach((value, name) => (n += name.length + value.length + 4));
  return n;
}

export const requestLimits = new Elysia({ name: "request-limits" }).onRequest(({ request }) => {
  if (targetLength(request.url) > REQUEST_LIMITS.urlBytes) throw plainError(414, `The request URL is longer than ${KIB(REQUEST_LIMITS.urlBytes)}.`);
  if (headerLength(request.headers) > REQUEST_LIMITS.headerBytes) throw plainError(431, `The request headers are larger than ${KIB(REQUEST_LIMITS.headerBytes)}.`);
  // A declared length is refused before a byte is read; a chunked body is counted as it is read.
  const declared = request.headers.get("content-length");
  if (declared !== null && Number(declared) > REQUEST_LIMITS.bodyBytes) throw bodyTooLarge();
});
