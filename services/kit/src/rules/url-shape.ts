// Which URLs can be requested at all, before any address is judged: an absolute http or https URL
// with a host. The gateway checks a creation's webhook_url with it, webhook-dispatcher a
// destination's site_url, and safe-http every request and redirect it sends, so the address a
// client is told is acceptable is the one the request will accept.

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
