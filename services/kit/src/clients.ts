// Generated-client factory for calls between the project's own processes: the Connect protocol
// (binary protobuf) over HTTP/1.1 with Bun's fetch and its keep-alive pool, the internal
// credential attached and a default deadline on every call. Outside clients use the gRPC port.
import { Code, ConnectError, createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import { createFetchClient, validateReadWriteMaxBytes } from "@connectrpc/connect/protocol";
import { createTransport } from "@connectrpc/connect/protocol-connect";
import type { DescService } from "@bufbuild/protobuf";
import { createHash } from "node:crypto";
import { traceClientInterceptor, tracingEnabled } from "./tracing.ts";

export interface ServiceClientOptions {
  baseUrl: string;
  serviceToken: string;
  /** Deadline of each call unless the caller sets its own. */
  timeoutMs?: number;
}

/**
 * fetch, with a connection that cannot be made or breaks reported as UNAVAILABLE (as gRPC does),
 * so callers retry it like any other outage; an abort stays an abort (deadline or cancel).
 */
const fetchOrUnavailable: typeof fetch = Object.assign(
  async (input: string | URL | Request, init?: RequestInit) => {
    try {
      return await fetch(input, init);
    } catch (error) {
      if (init?.signal?.aborted) throw error;
      throw new ConnectError((error as Error).message, Code.Unavailable, undefined, undefined, error);
    }
  },
  { preconnect: fetch.preconnect },
);

const transports = new Map<string, Transport>();

export function serviceClient<S extends DescService>(service: S, opts: ServiceClientOptions): Client<S> {
  // One transport per address, deadline and credential (a digest, never the token itself).
  const key = `${opts.baseUrl}|${opts.timeoutMs ?? 5000}|${createHash("sha256").update(opts.serviceToken).digest("base64url")}`;
  let transport = transports.get(key);
  if (!transport) {
    const authorization = `Bearer ${opts.serviceToken}`;
    const credential: Interceptor = (next) => (req) => {
      req.header.set("authorization", authorization);
      return next(req);
    };
    transport = createTransport({
      baseUrl: opts.baseUrl,
      httpClient: createFetchClient(fetchOrUnavailable),
      useBinaryFormat: true,
      // The traceparent header only when traces are exported: nothing extra on calls otherwise.
      interceptors: tracingEnabled() ? [credential, traceClientInterceptor()] : [credential],
      defaultTimeoutMs: opts.timeoutMs ?? 5000,
      // Services share one network: compressing between them costs CPU and saves nothing.
      sendCompression: null,
      acceptCompression: [],
      ...validateReadWriteMaxBytes(undefined, undefined, undefined),
    });
    transports.set(key, transport);
  }
  return createClient(service, transport);
}
