// The HTTP connections model calls travel on: the `fetch` the openai SDK is given. Bun's fetch is
// the quicker and the lighter path (per call about half the CPU of node:http under Bun, and a third
// of the memory: 1,000 calls in flight held 15 MiB against 48), but it carries at most
// BUN_CONFIG_MAX_HTTP_REQUESTS requests at once per process (256 unless the process was started
// with more: Bun reads it only at start, so the launchers give the runner 4,096) and queues the
// rest, while one runner holds as many model calls as articles in flight. So model calls use Bun's
// fetch up to a share that leaves 128 requests for the calls between services, and node:http
// keep-alive agents, which have no such cap, beyond it. Either way the whole reply is read before
// the call resolves (model replies are small JSON documents), and an abort ends the request at once.
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

/** Requests Bun's fetch carries at once in a process started with this environment. */
export function fetchCapacity(env: Record<string, string | undefined>): number {
  const value = Number(env.BUN_CONFIG_MAX_HTTP_REQUESTS);
  // Bun's own bounds; outside them it keeps its default.
  return Number.isInteger(value) && value >= 1 && value <= 65_535 ? value : 256;
}

/** Requests of Bun's fetch kept for the calls between services. */
const KEPT_FOR_SERVICES = 128;

/** Model calls Bun's fetch carries at once in this process; the rest go over node:http. */
export const FETCH_SHARE = Math.max(fetchCapacity(process.env) - KEPT_FOR_SERVICES, 0);
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
