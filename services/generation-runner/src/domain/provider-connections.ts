// The HTTP connections model calls travel on: the `fetch` the openai SDK is given. Bun's fetch is
// the quicker path, but it keeps at most 256 requests in flight per process
// (BUN_CONFIG_MAX_HTTP_REQUESTS, read only at process start) and queues the rest, while one runner
// holds far more model calls than that at once. So model calls use Bun's fetch up to a share that
// leaves room for the calls between services, and node:http keep-alive agents, which have no such
// cap, beyond it. Either way the whole reply is read before the call resolves (model replies are
// small JSON documents), and an abort ends the request at once.
import http from "node:http";
import https from "node:https";

// Connections stay open between calls, as many as there are calls in flight; the most recently
// used is reused first so the ones a burst opened can go idle and close.
const agentOptions = { keepAlive: true, maxSockets: Infinity, maxFreeSockets: 2048, scheduling: "lifo" as const };
const agents = { http: new http.Agent(agentOptions), https: new https.Agent(agentOptions) };

function abortError(signal: AbortSignal): Error {
  const reason = signal.reason;
  if (reason instanceof Error && reason.name === "AbortError") return reason;
  const error = new Error(reason instanceof Error ? reason.message : "the request was aborted", { cause: reason });
  error.name = "AbortError";
  return error;
}

function responseHeaders(raw: http.IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else if (value !== undefined) headers.set(name, value);
  }
  return headers;
}

/** Model calls Bun's fetch carries at once; the rest of its 256 stay free for calls between services. */
export const FETCH_SHARE = 128;
let onFetch = 0;

/** fetch for provider calls: Bun's own while under its share, node:http beyond. */
export async function providerFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  if (onFetch >= FETCH_SHARE) return nodeHttpFetch(input, init);
  onFetch++;
  try {
    const response = await fetch(input, init);
    // Read whole, so the request counts against the share until it is really done.
    const body = response.status === 204 || response.status === 304 ? null : await response.arrayBuffer();
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  } finally {
    onFetch--;
  }
}

/** fetch over node:http(s) keep-alive agents. */
export async function nodeHttpFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  // Request normalises every body the SDK sends (JSON text, multipart forms for batch files).
  const request = new Request(input, init);
  const signal = init?.signal ?? undefined;
  if (signal?.aborted) throw abortError(signal);
  const url = new URL(request.url);
  const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
  const headers: Record<string, string> = {};
  request.headers.forEach((value, name) => (headers[name] = value));
  if (body) headers["content-length"] = String(body.length);
  const secure = url.protocol === "https:";

  return new Promise<Response>((resolve, reject) => {
    let settled = false;
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener("abort", onAbort);
      outcome();
    };
    const onAbort = () => {
      finish(() => reject(abortError(signal!)));
      req.destroy();
    };
    const req = (secure ? https : http).request(url, { method: request.method, headers, agent: secure ? agents.https : agents.http }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", (error) => finish(() => reject(error)));
      res.on("end", () => {
        const status = res.statusCode ?? 502;
        const empty = status === 204 || status === 304 || request.method === "HEAD";
        finish(() => resolve(new Response(empty ? null : Buffer.concat(chunks), { status, statusText: res.statusMessage, headers: responseHeaders(res.headers) })));
      });
    });
    req.on("error", (error) => finish(() => reject(error)));
    signal?.addEventListener("abort", onAbort, { once: true });
    req.end(body);
  });
}
