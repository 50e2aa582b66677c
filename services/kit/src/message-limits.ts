// How much one message of a call may hold and how long a caller may ask a call to run: set on
// every Connect and gRPC listener and on the project's own clients. A listener reads, inflates
// and parses a request before any interceptor (the credential check included) sees it, so these
// are what bound a caller who has not yet said who it is.
//
// A compressed request is inflated only up to its limit: connect-node hands the limit to zlib as
// maxOutputLength, which stops inflating there (Bun's zlib too: a brotli body of 106 bytes that
// inflates to 64 MiB costs a few MiB, not 64), and the call is RESOURCE_EXHAUSTED.
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

/** The longest deadline a caller of a service may ask for (its own clients ask at most 2 minutes). */
export const SERVICE_DEADLINE_CAP_MS = 10 * 60_000;

/** The longest deadline a caller of the public port may ask for; a longer WatchArticle resumes from its last event id. */
export const PUBLIC_DEADLINE_CAP_MS = 60 * 60_000;

/** Compressions a gRPC listener takes: both are inflated only up to the request limit (above). */
export const BOUNDED_COMPRESSIONS = [compressionGzip, compressionBrotli];

/** The limits of a Connect handler whose callers may ask deadlines of up to `deadlineCapMs`. */
export function listenerLimits(deadlineCapMs: number) {
  return { readMaxBytes: REQUEST_MESSAGE_BYTES, writeMaxBytes: ANSWER_MESSAGE_BYTES, maxTimeoutMs: deadlineCapMs };
}
