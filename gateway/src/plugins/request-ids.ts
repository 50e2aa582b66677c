// Every answer names its request: X-Request-Id, the client's own when it sent a usable one (so a
// proxy's or a caller's id carries through), else a fresh one. It is what a client quotes to
// support, and it stands on the gateway's access line and on every error line of that request, so
// a 500 is found in the logs whether or not its trace was kept.

import { REQUEST_ID_HEADER, usableRequestId } from "../../../services/kit/src/request-context.ts";

export { REQUEST_ID_HEADER };

const ids = new WeakMap<Request, string>();

/** The request's id: the client's usable X-Request-Id, else a new one; the same for every later ask. */
export function requestIdOf(request: Request): string {
  let id = ids.get(request);
  if (id === undefined) {
    id = usableRequestId(request.headers.get(REQUEST_ID_HEADER)) ?? crypto.randomUUID();
    ids.set(request, id);
  }
  return id;
}

/** The response with the request's id on it (a response whose headers are fixed is copied). */
export function withRequestId(response: Response, id: string): Response {
  try {
    response.headers.set(REQUEST_ID_HEADER, id);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    copy.headers.set(REQUEST_ID_HEADER, id);
    return copy;
  }
}
