// Outbound HTTP to user-supplied URLs (webhooks, research pages) without SSRF.
// The host is resolved once, every resolved address is judged, and the request is sent to the
// judged address itself (the caller's name kept in Host and, for https, in SNI and the certificate
// check), so a DNS answer that changes between check and connect (DNS rebinding) cannot redirect
// the request to an internal address.
import dns from "node:dns";
import net from "node:net";
import ipaddr from "ipaddr.js";
import { checkUrlShape } from "./rules/url-shape.ts";
import type { Logger } from "./logger.ts";
import { within } from "./deadline.ts";

export type SafeHttpErrorReason =
  | "refused-address"
  | "bad-url"
  | "timeout"
  | "too-large"
  | "connection"
  | "content-type"
  | "too-many-redirects";

/**
 * `reason` is the machine-readable kind; `message` says what happened in words the URL's owner can
 * act on, and goes back to them (delivery records, publication errors, a refused destination).
 * It never names the address a host resolved to: a tenant could map the cluster's DNS with it.
 * `internal`, when there is more, says it with the address, for the service's log only.
 */
export class SafeHttpError extends Error {
  override readonly name = "SafeHttpError";
  readonly internal: string | undefined;
  constructor(
    readonly reason: SafeHttpErrorReason,
    detail: string,
    internal?: string,
  ) {
    super(`${reason}: ${detail}`);
    this.internal = internal === undefined ? undefined : `${reason}: ${internal}`;
  }
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** Resolves a hostname to all its addresses; injectable so tests can prove it runs once. */
export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface SafeRequestOptions {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** Skip the address check entirely (ALLOW_PRIVATE_URLS: local development and tests). */
  allowPrivate?: boolean;
  /** Origins (scheme://host:port) exempt from the address check, e.g. the bundled simulator. */
  trustedOrigins?: string[];
  /** Budget for the whole exchange: resolution, every redirect hop and the body. */
  timeoutMs?: number;
  maxResponseBytes?: number;
  /** 0 returns a 3xx as the response; n > 0 follows up to n hops, each re-checked. */
  followRedirects?: number;
  /** Media types (without parameters) accepted for the final response. */
  acceptContentTypes?: string[];
  resolveHost?: HostResolver;
  /**
   * Keep connections open for later requests to the same judged address (webhook deliveries,
   * many to few receivers). A kept connection is only reused for a request sent to that same
   * judged address (and TLS name), so pinning holds as for a new one.
   */
  keepAlive?: boolean;
  /** Where a failure's internal detail (the resolved address) is written; the error itself never carries it. */
  logger?: Pick<Logger, "warn">;
}

export interface SafeResponse {
  status: number;
  /** Response headers by lower-case name. */
  headers: Record<string, string>;
  body: Buffer;
  /** The URL that produced this response, after any redirects. */
  url: string;
  /** The IP address the socket was connected to. */
  address: string;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

// ipaddr.js range names, in the words a delivery log should show.
const RANGE_WORDS: Record<string, string> = {
  unspecified: "unspecified address",
  broadcast: "broadcast address",
  multicast: "multicast address",
  linkLocal: "link-local address",
  loopback: "loopback address",
  carrierGradeNat: "carrier-grade NAT address",
  private: "private address",
  reserved: "reserved address",
  uniqueLocal: "unique-local address",
  ipv4Mapped: "IPv4-mapped IPv6 address",
  rfc6145: "IPv4-translated IPv6 address",
  rfc6052: "NAT64 address",
  "6to4": "6to4 address",
  teredo: "Teredo address",
  deprecatedSiteLocal: "site-local address",
  discard: "discard-only address",
  benchmarking: "benchmarking address",
};

/** Returns why an IP address must not be contacted, or null when it is ordinary public unicast. */
export function isForbiddenAddress(ip: string): string | null {
  const literal = ip.startsWith("[") && ip.endsWith("]") ? ip.slice(1, -1) : ip;
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(literal);
  } catch {
    return `not an IP address: ${ip}`;
  }
  const range = addr.range();
  const shown = addr.toString();

  if (addr.kind() === "ipv6") {
    const v6 = addr as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress()) {
      // The OS connects to the embedded IPv4 address; name it, and refuse either way since no
      // legitimate public endpoint needs to be reached through this form.
      const embedded = v6.toIPv4Address().toString();
      const inner = isForbiddenAddress(embedded);
      return `IPv4-mapped IPv6 address ${shown}` + (inner ? ` (embeds ${inner})` : ` (embeds ${embedded})`);
    }
    // ::a.b.c.d (deprecated IPv4-compatible form) is "unicast" to ipaddr.js but never public.
    const parts = v6.parts;
    if (range === "unicast" && parts.slice(0, 6).every((p) => p === 0)) {
      return `IPv4-compatible IPv6 address ${shown}`;
    }
  }

  if (range === "unicast") return null;
  if (range === "linkLocal" && shown === "169.254.169.254") {
    return `link-local address ${shown} (cloud metadata endpoint)`;
  }
  return `${RANGE_WORDS[range] ?? `special-purpose address (${range})`} ${shown}`;
}

const systemResolver: HostResolver = async (hostname) => {
  const found = await dns.promises.lookup(hostname, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

function trustedOriginSet(origins: string[] | undefined): Set<string> {
  const set = new Set<string>();
  for (const origin of origins ?? []) {
    try {
      set.add(new URL(origin).origin);
    } catch {
      // A malformed allowance grants nothing.
    }
  }
  return set;
}

function remaining(deadline: number): number {
  return Math.max(0, deadline - Date.now());
}

function withinDeadline<T>(work: Promise<T>, deadline: number, what: string, timeoutMs: number): Promise<T> {
  return within(work, remaining(deadline), () => new SafeHttpError("timeout", `${what} did not finish within ${timeoutMs} ms`));
}

/** Resolves the URL's host once and judges every address; returns the addresses to connect to. */
async function checkedAddresses(
  target: URL,
  opts: SafeRequestOptions,
  trusted: Set<string>,
  deadline: number,
  timeoutMs: number,
): Promise<ResolvedAddress[]> {
  const host = target.hostname.replace(/^\[|\]$/g, "");
  let addresses: ResolvedAddress[];
  const ipFamily = net.isIP(host);
  if (ipFamily) {
    addresses = [{ address: host, family: ipFamily === 6 ? 6 : 4 }];
  } else {
    const resolver = opts.resolveHost ?? systemResolver;
    try {
      addresses = await withinDeadline(resolver(host), deadline, `resolving ${host}`, timeoutMs);
    } catch (err) {
      if (err instanceof SafeHttpError) throw err;
      const code = (err as { code?: string }).code ?? (err as Error).message;
      throw new SafeHttpError("connection", `could not resolve ${host} (${code})`);
    }
    if (addresses.length === 0) throw new SafeHttpError("connection", `${host} has no addresses`);
  }

  if (!opts.allowPrivate && !trusted.has(target.origin)) {
    // One forbidden answer taints the host: the OS or a retry could pick any of them.
    for (const { address } of addresses) {
      const why = isForbiddenAddress(address);
      if (why) {
        // The literal is the caller's own; a name's answer is the cluster's, said only in the log.
        if (ipFamily) throw new SafeHttpError("refused-address", `${host} is a private address, which is not allowed`, `${why} is not allowed`);
        throw new SafeHttpError("refused-address", `${host} resolves to a private address, which is not allowed`, `${host} resolves to ${why}, which is not allowed`);
      }
    }
  }
  // IPv4 first: local servers commonly listen on 127.0.0.1 only.
  return [...addresses].sort((a, b) => a.family - b.family);
}

interface Hop {
  target: URL;
  method: string;
  headers: Record<string, string>;
  body: Uint8Array<ArrayBuffer> | undefined;
}

type HopResult = { kind: "response"; response: SafeResponse } | { kind: "redirect"; location: string; status: number };

const CONNECT_ERRORS = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL", "ConnectionRefused"]);

function mediaType(header: string | undefined): string {
  return (header ?? "").split(";")[0]!.trim().toLowerCase();
}

/**
 * The URL that reaches `pinned` itself: fetch never resolves a name, so a DNS answer that changes
 * after the check has nothing to act on. The Host header carries the name the caller asked for.
 */
function pinnedUrl(target: URL, pinned: ResolvedAddress): URL {
  const at = new URL(target.href);
  at.hostname = pinned.family === 6 ? `[${pinned.address}]` : pinned.address;
  return at;
}

/**
 * One request/response exchange with the judged address `pinned`, through fetch (Bun's native
 * client, off the JavaScript thread). Kept connections are pooled by address, port and TLS name,
 * so a kept one only serves requests whose host was judged to that same address.
 */
async function exchange(
  hop: Hop,
  pinned: ResolvedAddress,
  follow: boolean,
  opts: SafeRequestOptions,
  deadline: number,
  timeoutMs: number,
  maxBytes: number,
): Promise<HopResult> {
  const { target } = hop;
  const hostname = target.hostname.replace(/^\[|\]$/g, "");
  // SNI and certificate checks stay on the name the caller asked for.
  const serverName = target.protocol === "https:" && !net.isIP(hostname) ? hostname : undefined;
  const aborts = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    aborts.abort();
  }, remaining(deadline));
  const timeout = () => new SafeHttpError("timeout", `${target.origin} did not answer within ${timeoutMs} ms`);
  try {
    let res: Response;
    try {
      res = await fetch(pinnedUrl(target, pinned), {
        method: hop.method,
        headers: hop.headers,
        body: hop.body,
        // Each hop is judged here before it is taken; fetch must not take one on its own.
        redirect: "manual",
        keepalive: opts.keepAlive ?? false,
        signal: aborts.signal,
        ...(serverName ? { tls: { serverName } } : {}),
      });
    } catch (err) {
      if (timedOut) throw timeout();
      const code = (err as { code?: string }).code;
      const why = code ?? (err as Error).message;
      const failure = new SafeHttpError("connection", `could not connect to ${target.origin} (${why})`, `could not connect to ${target.origin} at ${pinned.address} (${why})`);
      (failure as { code?: string }).code = code;
      throw failure;
    }

    const status = res.status;
    const headers: Record<string, string> = {};
    res.headers.forEach((value, name) => (headers[name] = value));
    const isRedirect = status >= 300 && status < 400;
    const refuse = (err: SafeHttpError) => {
      aborts.abort();
      return err;
    };
    if (follow && isRedirect && headers.location) {
      aborts.abort();
      return { kind: "redirect", location: headers.location, status };
    }
    // Redirects are not content; only a final answer must be of an accepted type.
    if (opts.acceptContentTypes && !isRedirect) {
      const type = mediaType(headers["content-type"]);
      const accepted = opts.acceptContentTypes.map((t) => t.toLowerCase());
      if (!accepted.includes(type)) {
        throw refuse(new SafeHttpError("content-type", `content type "${type || "none"}" is not one of ${accepted.join(", ")}`));
      }
    }
    const declared = Number(headers["content-length"]);
    if (Number.isFinite(declared) && declared > maxBytes) {
      throw refuse(new SafeHttpError("too-large", `response declares ${declared} bytes, limit is ${maxBytes}`));
    }

    const chunks: Uint8Array[] = [];
    let size = 0;
    if (res.body) {
      const reader = res.body.getReader();
      try {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          size += value.byteLength;
          if (size > maxBytes) throw refuse(new SafeHttpError("too-large", `response exceeded ${maxBytes} bytes`));
          chunks.push(value);
        }
      } catch (err) {
        if (err instanceof SafeHttpError) throw err;
        if (timedOut) throw timeout();
        throw new SafeHttpError("connection", `response from ${target.origin} broke off (${(err as Error).message})`);
      }
    }
    return {
      kind: "response",
      response: { status, headers, body: Buffer.concat(chunks, size), url: target.href, address: pinned.address },
    };
  } finally {
    clearTimeout(timer);
  }
}

function nextHop(hop: Hop, location: string, status: number): Hop {
  let target: URL;
  try {
    target = new URL(location, hop.target);
  } catch {
    throw new SafeHttpError("bad-url", `redirect to an invalid location: ${location}`);
  }
  const shape = checkUrlShape(target.href);
  if (shape) throw new SafeHttpError("bad-url", `redirect to ${target.href}: ${shape}`);
  target.hash = "";

  const headers = { ...hop.headers };
  let { method, body } = hop;
  // Browsers' rules: 303 always, and 301/302 after POST, become a body-less GET.
  if (status === 303 ? method !== "HEAD" : (status === 301 || status === 302) && method === "POST") {
    method = "GET";
    body = undefined;
    delete headers["content-type"];
    delete headers["content-length"];
  }
  if (target.origin !== hop.target.origin) {
    // Credentials were meant for the first origin only.
    delete headers["authorization"];
    delete headers["cookie"];
    delete headers["proxy-authorization"];
  }
  headers["host"] = target.host;
  return { target, method, headers, body };
}

/**
 * Performs one HTTP request to a user-supplied URL, refusing internal addresses.
 * Throws SafeHttpError; any HTTP status (including 4xx/5xx) is returned, not thrown.
 */
export async function safeRequest(url: string, opts: SafeRequestOptions = {}): Promise<SafeResponse> {
  try {
    return await request(url, opts);
  } catch (error) {
    if (error instanceof SafeHttpError && error.internal !== undefined) opts.logger?.warn("outbound request failed", { url: new URL(url).origin, error: error.internal });
    throw error;
  }
}

async function request(url: string, opts: SafeRequestOptions): Promise<SafeResponse> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxBytes = opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const maxRedirects = Math.max(0, opts.followRedirects ?? 0);
  const deadline = Date.now() + timeoutMs;
  const trusted = trustedOriginSet(opts.trustedOrigins);

  const shape = checkUrlShape(url);
  if (shape) throw new SafeHttpError("bad-url", shape);
  const first = new URL(url);
  first.hash = "";

  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(opts.headers ?? {})) headers[name.toLowerCase()] = value;
  headers["host"] = first.host;
  // Asks for the body as is; one a server encodes anyway is decoded, and the size limit counts
  // the decoded bytes.
  headers["accept-encoding"] ??= "identity";
  if (!opts.keepAlive) headers["connection"] = "close";
  if ((first.username || first.password) && !headers["authorization"]) {
    const user = decodeURIComponent(first.username);
    const pass = decodeURIComponent(first.password);
    headers["authorization"] = `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}`;
  }
  first.username = "";
  first.password = "";
  const body = opts.body === undefined ? undefined : typeof opts.body === "string" ? Buffer.from(opts.body) : new Uint8Array(opts.body);
  if (body) headers["content-length"] = String(body.length);

  let hop: Hop = { target: first, method: (opts.method ?? "GET").toUpperCase(), headers, body };
  for (let redirects = 0; ; redirects++) {
    const addresses = await checkedAddresses(hop.target, opts, trusted, deadline, timeoutMs);
    let result: HopResult | undefined;
    for (let i = 0; i < addresses.length; i++) {
      try {
        result = await exchange(hop, addresses[i]!, maxRedirects > 0, opts, deadline, timeoutMs, maxBytes);
        break;
      } catch (err) {
        // Another checked address of the same host may be listening (dual-stack hosts).
        const code = (err as { code?: string }).code;
        const canRetry = err instanceof SafeHttpError && err.reason === "connection" && code && CONNECT_ERRORS.has(code);
        if (!canRetry || i === addresses.length - 1) throw err;
      }
    }
    if (!result) throw new SafeHttpError("connection", `no address of ${hop.target.hostname} answered`);
    if (result.kind === "response") return result.response;
    if (redirects >= maxRedirects) {
      throw new SafeHttpError("too-many-redirects", `more than ${maxRedirects} redirects starting at ${url}`);
    }
    hop = nextHop(hop, result.location, result.status);
  }
}
