// Generated-client factory for calls between processes: gRPC over HTTP/2 with the internal
// credential attached and a default deadline on every call.
import { createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { DescService } from "@bufbuild/protobuf";
import { createHash } from "node:crypto";

export interface ServiceClientOptions {
  baseUrl: string;
  serviceToken: string;
  /** Deadline of each call unless the caller sets its own. */
  timeoutMs?: number;
}

const transports = new Map<string, ReturnType<typeof createGrpcTransport>>();

export function serviceClient<S extends DescService>(service: S, opts: ServiceClientOptions): Client<S> {
  // One HTTP/2 session per address, deadline and credential (a digest, never the token itself).
  const key = `${opts.baseUrl}|${opts.timeoutMs ?? 5000}|${createHash("sha256").update(opts.serviceToken).digest("base64url")}`;
  let transport = transports.get(key);
  if (!transport) {
    const credential: Interceptor = (next) => (req) => {
      req.header.set("authorization", `Bearer ${opts.serviceToken}`);
      return next(req);
    };
    transport = createGrpcTransport({
      baseUrl: opts.baseUrl,
      interceptors: [credential],
      defaultTimeoutMs: opts.timeoutMs ?? 5000,
    });
    transports.set(key, transport);
  }
  return createClient(service, transport);
}
