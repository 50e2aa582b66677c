// How much one message of a call may hold and how long a caller may ask a call to run: set on
// every Connect and gRPC listener and on the project's own clients. A listener reads, inflates
// and parses a request before any interceptor (the credential check included) sees it, so these
// are what bound a caller who has not yet said who it is.
//
// A compressed request is inflated only up to its limit: connect-node hands the limit to zlib as
// maxOutputLength, which stops inflating there (Bun's zlib too: a brotli body of 106 bytes that
// inflates to 64 MiB costs a few MiB, not 64), and the call is RESOURCE_EXHAUSTED.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Http2ServerRequest, Http2ServerResponse } from "node:http2";
import { compressionBrotli, compressionGzip } from "@connectrpc/connect-node";

const MIB = 1024 * 1024;

/**
 * One request message, as the HTTP API's body limit, on every listener. The largest request of
 * any contract is article-store's: a whole article at its largest, about 0.5 MB (below), when
 * generation completes or a version is added (and up to 500 delivery records of a few hundred
 * bytes each, RecordDeliveries), so no service needs more.
 */
export const REQUEST_MESSAGE_BYTES = MIB;

/**
 * One answer, of the internal contracts and of the public port: the largest the spec allows is a
 * page of 100 articles (ListArticles, BatchGetArticles; per_page at most 100). One article at its
 * largest: content and original_content of 10,000 words each at up to 16 bytes a word (a script
 * of two- and three-byte characters, markup) 320,000 bytes; additional_context, 25,000 characters
 * of up to 3 bytes, 75,000; 20 research sources' URLs, titles and site names (up to 2,500 bytes
 * each) 50,000; the other settings (audience, instruction, keywords, 100 domains, publications)
 * about 40,000: 485,000 bytes, so a page is about 46 MiB. 64 MiB holds it with room; an image
 * (GetImage) is far smaller.
 */
export const ANSWER_MESSAGE_BYTES = 64 * MIB;

/** The longest a call to a service runs (its own clients ask at most 2 minutes). */
export const SERVICE_DEADLINE_CAP_MS = 10 * 60_000;

/** The longest a call to the public port runs; a WatchArticle that needs longer resumes from its last event id. */
export const PUBLIC_DEADLINE_CAP_MS = 60 * 60_000;

/** A request's headers as a listener holds them: node's (the gRPC listeners) or fetch's (the Connect ones). */
type RequestHeaders = Record<string, string | string[] | undefined> | Headers;

// gRPC's timeout: at most 8 digits and a unit (hours, minutes, seconds, milli-, micro-, nanoseconds).
const GRPC_TIMEOUT = /^(\d{1,8})([HMSmun])$/;
const GRPC_UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 };
const CONNECT_TIMEOUT = /^\d{1,10}$/;

/**
 * A deadline longer than the listener's cap is shortened to the cap, as a gRPC server bounds what
 * it will spend on a call, rather than refused: clients commonly ask a day for a stream, and the
 * call then ends DEADLINE_EXCEEDED at the cap like any other. Done on the request's headers
 * before Connect reads them (`grpc-timeout` of gRPC and gRPC-web, `connect-timeout-ms` of
 * Connect); a header Connect cannot read is left for it to refuse.
 */
export function capDeadline(headers: RequestHeaders, capMs: number): void {
  const read = (name: string) => (headers instanceof Headers ? headers.get(name) : headers[name]);
  const write = (name: string, value: string) => (headers instanceof Headers ? headers.set(name, value) : (headers[name] = value));
  const grpc = read("grpc-timeout");
  const grpcParts = typeof grpc === "string" ? GRPC_TIMEOUT.exec(grpc) : null;
  if (grpcParts && Number(grpcParts[1]) * GRPC_UNIT_MS[grpcParts[2]!]! > capMs) write("grpc-timeout", `${capMs}m`);
  const connect = read("connect-timeout-ms");
  if (typeof connect === "string" && CONNECT_TIMEOUT.test(connect) && Number(connect) > capMs) write("connect-timeout-ms", String(capMs));
}

/** Compressions a gRPC listener takes: both are inflated only up to the request limit (above). */
export const BOUNDED_COMPRESSIONS = [compressionGzip, compressionBrotli];

/** The limits of a Connect handler whose callers' deadlines are capped at `deadlineCapMs` (capDeadline, before it). */
export function listenerLimits(deadlineCapMs: number) {
  return { readMaxBytes: REQUEST_MESSAGE_BYTES, writeMaxBytes: ANSWER_MESSAGE_BYTES, maxTimeoutMs: deadlineCapMs };
}

type NodeHandler = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => void;

/** A node listener's handler (the gRPC ports) with each request's deadline capped first. */
export function withDeadlineCap<H extends NodeHandler>(handler: H, capMs: number): H {
  return ((req, res) => {
    capDeadline(req.headers, capMs);
    handler(req, res);
  }) as H;
}
