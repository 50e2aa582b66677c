// Which URLs can be requested at all, before any address is judged: an absolute http or https URL
// with a host. The gateway checks a creation's webhook_url with it, webhook-dispatcher a
// destination's site_url, and safe-http every request and redirect it sends, so the address a
// client is told is acceptable is the one the request will accept.

export type UrlScheme = "http:" | "https:";

/**
 * Returns why a URL cannot be requested at all, or null when its shape is acceptable. `schemes`
 * narrows what is accepted (a destination's site is https only, outside development); a refusal
 * names the schemes that are.
 */
export function checkUrlShape(url: string, schemes: readonly UrlScheme[] = ["http:", "https:"]): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return "not a valid absolute URL";
  }
  if (!(schemes as readonly string[]).includes(parsed.protocol)) {
    return `scheme ${parsed.protocol} is not allowed (use ${schemes.map((s) => s.slice(0, -1)).join(" or ")})`;
  }
  if (!parsed.hostname) return "URL has no host";
  return null;
}
