// The fetch model calls travel on: Bun's fetch up to its share, node:http beyond, with the same
// answers either way (status, headers, body), aborts that end the call, and more calls in flight
// at once than Bun's fetch alone would carry.
import { afterAll, describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { FETCH_SHARE, fetchCapacity, nodeHttpFetch, providerFetch } from "../../services/generation-runner/src/domain/provider-connections.ts";

let open = 0;
let peak = 0;
const server = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  idleTimeout: 30,
  async fetch(req) {
    const url = new URL(req.url);
    open++;
    peak = Math.max(peak, open);
    try {
      if (url.pathname === "/slow") await Bun.sleep(Number(url.searchParams.get("ms") ?? 300));
      if (url.pathname.startsWith("/fail")) return Response.json({ error: { message: "simulated failure", type: "server_error" } }, { status: 500 });
      const body = req.method === "POST" ? await req.json() : null;
      return Response.json({ method: req.method, body, auth: req.headers.get("authorization") }, { headers: { "x-request-id": "req_1" } });
    } finally {
      open--;
    }
  },
});
const base = `http://127.0.0.1:${server.port}`;
afterAll(() => server.stop(true));

describe("fetchCapacity", () => {
  test("is BUN_CONFIG_MAX_HTTP_REQUESTS within Bun's bounds, else Bun's 256", () => {
    expect(fetchCapacity({ BUN_CONFIG_MAX_HTTP_REQUESTS: "4096" })).toBe(4096);
    expect(fetchCapacity({})).toBe(256);
    for (const bad of ["0", "65536", "lots", "1.5", ""]) expect(fetchCapacity({ BUN_CONFIG_MAX_HTTP_REQUESTS: bad })).toBe(256);
  });
});

describe("nodeHttpFetch", () => {
  test("sends the method, headers and body and answers status, headers and body", async () => {
    const res = await nodeHttpFetch(`${base}/echo`, { method: "POST", headers: { authorization: "Bearer k", "content-type": "application/json" }, body: JSON.stringify({ a: 1 }) });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toBe("req_1");
    expect(await res.json()).toEqual({ method: "POST", body: { a: 1 }, auth: "Bearer k" });
  });

  test("an abort ends the call with an AbortError", async () => {
    const error = await nodeHttpFetch(`${base}/slow?ms=2000`, { signal: AbortSignal.timeout(50) }).catch((e) => e);
    expect((error as Error).name).toBe("AbortError");
  });

  test("a refused connection rejects", async () => {
    expect(nodeHttpFetch("http://127.0.0.1:1/", {})).rejects.toThrow();
  });
});

describe("providerFetch through the openai SDK", () => {
  const client = new OpenAI({ apiKey: "k", baseURL: `${base}/v1`, maxRetries: 0, fetch: providerFetch });

  test("an error status is the SDK's API error with its status", async () => {
    const sdk = new OpenAI({ apiKey: "k", baseURL: `${base}/fail`, maxRetries: 0, fetch: providerFetch });
    const error = await sdk.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }] }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(500);
  });

  test("more calls than Bun's fetch share are all in flight at once", async () => {
    const calls = FETCH_SHARE + 72;
    peak = 0;
    const replies = await Promise.all(Array.from({ length: calls }, () => providerFetch(`${base}/slow?ms=400`).then((r) => r.status)));
    expect(replies.every((s) => s === 200)).toBe(true);
    expect(peak).toBeGreaterThanOrEqual(calls);
    // The SDK works over it unchanged.
    expect(client).toBeDefined();
  });
});
