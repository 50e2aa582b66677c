// Fetches research pages from search results: arbitrary public URLs, so every request and
// every redirect hop goes through the SSRF guard.
import { safeRequest, type HostResolver } from "../../../kit/src/safe-http.ts";
import type { FetchPage } from "./research.ts";

export interface PageFetcherConfig {
  allowPrivate: boolean;
  trustedOrigins?: string[];
  timeoutMs?: number;
  maxBytes?: number;
  /** For tests only: replaces DNS. */
  resolveHost?: HostResolver;
}

const HTML_TYPES = ["text/html", "application/xhtml+xml"];
const USER_AGENT = "ArticleGenerationService-Research/1.0 (+https://example.invalid/bot)";

/** The charset from Content-Type, else from a <meta> in the first bytes, else UTF-8. */
function charsetOf(contentType: string | undefined, body: Buffer): string {
  const fromHeader = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType ?? "")?.[1];
  if (fromHeader) return fromHeader;
  const head = body.subarray(0, 2048).toString("latin1");
  return /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head)?.[1] ?? "utf-8";
}

function decodeHtml(body: Buffer, contentType: string | undefined): string {
  try {
    return new TextDecoder(charsetOf(contentType, body)).decode(body);
  } catch {
    return new TextDecoder("utf-8").decode(body);
  }
}

export function createPageFetcher(config: PageFetcherConfig): FetchPage {
  const timeoutMs = config.timeoutMs ?? 10_000;
  const maxBytes = config.maxBytes ?? 2_000_000;
  return async (url: string) => {
    const response = await safeRequest(url, {
      method: "GET",
      headers: { accept: "text/html,application/xhtml+xml;q=0.9", "user-agent": USER_AGENT },
      allowPrivate: config.allowPrivate,
      trustedOrigins: config.trustedOrigins,
      timeoutMs,
      maxResponseBytes: maxBytes,
      followRedirects: 3,
      acceptContentTypes: HTML_TYPES,
      resolveHost: config.resolveHost,
    });
    if (response.status < 200 || response.status > 299) throw new Error(`HTTP ${response.status}`);
    return { html: decodeHtml(response.body, response.headers["content-type"]), finalUrl: response.url };
  };
}
