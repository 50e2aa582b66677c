// Outbound HTTP to user-supplied URLs (webhooks, research pages) without SSRF.
// The host is resolved once, every resolved address is judged, and the socket is pinned to the
// judged address through a custom `lookup`, so a DNS answer that changes between check and
// connect (DNS rebinding) cannot redirect the request to an internal address.
import dns from "node:dns";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import ipaddr from "ipaddr.js";

export type SafeHttpErrorReason =
  | "refused-address"
  | "bad-url"
  | "timeout"
  | "too-large"
  | "connection"
  | "content-type"
  | "too-many-redirects";

/** `reason` is the machine-readable kind; `message` says what happened, for logs and delivery records. */
export class SafeHttpError extends Error {
  override readonly name = "SafeHttpError";
  constructor(
    readonly reason: SafeHttpErrorReason,
    detail: string,
  ) {
    super(`${reason}: ${detail}`);
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
   * many to few receivers). A kept socket is only reused for a request whose host was resolved
   * and judged to that same address, so pinning holds as for a new socket.
   */
  keepAlive?: boolean;
}

export interface SafeResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  /** The URL that produced this response, after any redirects. */
  url: string;
  /** The IP address the socket was connected to. */
  address: string;
}

const DEFAULT_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_RESPONSE_BYTES = 10 * 1024 * 1024;

/** Returns why a URL cannot be requested at all, or null when its shape is acceptable. */
export function checkUrlShape(url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "not a valid absolute URL";
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return `scheme ${parsed.protocol} is not allowed (use http or https)`;
  }
  if (!parsed.hostname) return "URL has no host";
  return null;
}

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

async function withinDeadline<T>(work: Promise<T>, deadline: number, what: string, timeoutMs: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expiry = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new SafeHttpError("timeout", `${what} did not finish within ${timeoutMs} ms`)),
      remaining(deadline),
    );
  });
  try {
    return await Promise.race([work, expiry]);
  } finally {
    clearTimeout(timer);
  }
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
        throw new SafeHttpError(
          "refused-address",
          ipFamily ? `${why} is not allowed` : `${host} resolves to ${why}, which is not allowed`,
        );
      }
    }
  }
  // IPv4 first: local servers commonly listen on 127.0.0.1 only.
  return [...addresses].sort((a, b) => a.family - b.family);
}

// Kept connections, one agent per judged address (and TLS name), the least recently opened
// dropped first. An idle socket closes after KEPT_IDLE_MS, before common servers drop it (5 s).
const KEPT_IDLE_MS = 2_000;
const MAX_KEPT_ADDRESSES = 256;
const keptAgents = new Map<string, http.Agent>();

function keptAgent(isHttps: boolean, pinned: ResolvedAddress, port: string | number, servername: string | undefined): http.Agent {
  const key = `${isHttps ? "https" : "http"} ${pinned.address} ${port} ${servername ?? ""}`;
  let agent = keptAgents.get(key);
  if (!agent) {
    // As many idle sockets as a dispatcher has deliveries in flight, so a burst does not reconnect.
    const options = { keepAlive: true, maxFreeSockets: 256, timeout: KEPT_IDLE_MS, scheduling: "lifo" as const };
    agent = isHttps ? new https.Agent(options) : new http.Agent(options);
    keptAgents.set(key, agent);
    for (const [oldest, old] of keptAgents) {
      if (keptAgents.size <= MAX_KEPT_ADDRESSES) break;
      keptAgents.delete(oldest);
      old.destroy();
    }
  }
  return agent;
}

interface Hop {
  target: URL;
  method: string;
  headers: Record<string, string>;
  body: Buffer | undefined;
}

type HopResult = { kind: "response"; response: SafeResponse } | { kind: "redirect"; location: string; status: number };

const CONNECT_ERRORS = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL", "ConnectionRefused"]);

function mediaType(header: string | undefined): string {
  return (header ?? "").split(";")[0]!.trim().toLowerCase();
}

/** One request/response exchange on a socket pinned to `pinned`. */
function exchange(
  hop: Hop,
  pinned: ResolvedAddress,
  follow: boolean,
  opts: SafeRequestOptions,
  deadline: number,
  timeoutMs: number,
  maxBytes: number,
): Promise<HopResult> {
  const { target } = hop;
  const isHttps = target.protocol === "https:";
  const hostname = target.hostname.replace(/^\[|\]$/g, "");
  const client = isHttps ? https : http;

  // Answers every lookup with the address that was judged; never asks DNS again.
  const pinnedLookup = (
    _host: string,
    options: { all?: boolean } | number | undefined,
    callback: (...args: unknown[]) => void,
  ) => {
    const all = typeof options === "object" && options?.all;
    if (all) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  };

  return new Promise<HopResult>((resolve, reject) => {
    let settled = false;
    let req: http.ClientRequest | undefined;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      fn();
    };
    const fail = (err: SafeHttpError) => {
      settle(() => reject(err));
      req?.destroy();
    };
    const timer = setTimeout(
      () => fail(new SafeHttpError("timeout", `${target.origin} did not answer within ${timeoutMs} ms`)),
      remaining(deadline),
    );

    const port = target.port || (isHttps ? 443 : 80);
    // SNI and certificate checks stay on the name the caller asked for.
    const servername = isHttps && !net.isIP(hostname) ? hostname : undefined;
    const requestOptions: https.RequestOptions = {
      protocol: target.protocol,
      hostname,
      port,
      path: `${target.pathname}${target.search}`,
      method: hop.method,
      headers: hop.headers,
      lookup: pinnedLookup as unknown as net.LookupFunction,
      agent: opts.keepAlive ? keptAgent(isHttps, pinned, port, servername) : false,
      ...(servername ? { servername } : {}),
    };
    let answered = false;

    req = client.request(requestOptions, (res) => {
      answered = true;
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (follow && status >= 300 && status < 400 && location) {
        settle(() => resolve({ kind: "redirect", location, status }));
        res.destroy();
        req?.destroy();
        return;
      }
      // Redirects are not content; only a final answer must be of an accepted type.
      const isRedirect = status >= 300 && status < 400;
      if (opts.acceptContentTypes && !isRedirect) {
        const type = mediaType(res.headers["content-type"]);
        const accepted = opts.acceptContentTypes.map((t) => t.toLowerCase());
        if (!accepted.includes(type)) {
          fail(new SafeHttpError("content-type", `content type "${type || "none"}" is not one of ${accepted.join(", ")}`));
          res.destroy();
          return;
        }
      }
      const declared = Number(res.headers["content-length"]);
      if (Number.isFinite(declared) && declared > maxBytes) {
        fail(new SafeHttpError("too-large", `response declares ${declared} bytes, limit is ${maxBytes}`));
        res.destroy();
        return;
      }
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer | string) => {
        const buf = typeof chunk === "string" ? Buffer.from(chunk) : chunk;
        size += buf.length;
        if (size > maxBytes) {
          fail(new SafeHttpError("too-large", `response exceeded ${maxBytes} bytes`));
          res.destroy();
          return;
        }
        chunks.push(buf);
      });
      res.on("end", () =>
        settle(() =>
          resolve({
            kind: "response",
            response: { status, headers: res.headers, body: Buffer.concat(chunks), url: target.href, address: pinned.address },
          }),
        ),
      );
      res.on("error", (err) =>
        fail(new SafeHttpError("connection", `response from ${target.origin} broke off (${err.message})`)),
      );
    });

    req.on("error", (err: NodeJS.ErrnoException) => {
      // A kept socket the server closed meanwhile is our connection's failure, not the
      // receiver's: the request goes again once, on a new socket.
      if (req?.reusedSocket && !answered) {
        settle(() => resolve(exchange(hop, pinned, follow, { ...opts, keepAlive: false }, deadline, timeoutMs, maxBytes)));
        return;
      }
      const detail = err.code ? `${err.code}` : err.message;
      const failure = new SafeHttpError("connection", `could not reach ${target.origin} at ${pinned.address} (${detail})`);
      (failure as { code?: string }).code = err.code;
      fail(failure);
    });
    if (hop.body) req.write(hop.body);
    req.end();
  });
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
  // The raw body is measured and returned as sent; no transparent decompression.
  headers["accept-encoding"] ??= "identity";
  if (!opts.keepAlive) headers["connection"] = "close";
  if ((first.username || first.password) && !headers["authorization"]) {
    const user = decodeURIComponent(first.username);
    const pass = decodeURIComponent(first.password);
    headers["authorization"] = `Basic ${Buffer.from(`${user}:${pass}`).toString("base64")}`;
  }
  first.username = "";
  first.password = "";
  const body = opts.body === undefined ? undefined : Buffer.from(opts.body);
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
