// Which search results research may use, by domain (spec 4.1: research include/exclude domains).
// The gateway validates a creation request's domain lists with these rules and the runner filters
// search results with them, so both processes apply the one copy here.

/**
 * Excluded when the caller gives no exclude list. These sites rank well but yield little a writer
 * can cite: Pinterest is image pins, Quora and Reddit are user threads of uneven quality (and
 * Reddit serves readers a login wall), Facebook pages are behind a login.
 */
export const DEFAULT_EXCLUDED_DOMAINS: readonly string[] = ["pinterest.com", "quora.com", "reddit.com", "facebook.com"];

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;

/** A bare hostname such as "example.com" or "blog.example.co.uk": no scheme, port, or path. */
export function isValidDomain(value: string): boolean {
  if (value.length === 0 || value.length > 253) return false;
  const labels = value.split(".");
  if (labels.length < 2) return false;
  if (!labels.every((label) => LABEL.test(label))) return false;
  // An all-numeric last label means an IP address, not a domain.
  return !/^\d+$/.test(labels[labels.length - 1]!);
}

function normalizeDomain(domain: string): string {
  return domain.trim().toLowerCase().replace(/\.$/, "");
}

/** True when `host` is `domain` or one of its subdomains ("blog.example.com" is under "example.com"). */
export function hostMatchesDomain(host: string, domain: string): boolean {
  const h = normalizeDomain(host);
  const d = normalizeDomain(domain);
  return d.length > 0 && (h === d || h.endsWith(`.${d}`));
}

export interface DomainFilter {
  include?: readonly string[];
  exclude?: readonly string[];
}

/** A non-empty include list is the whole allowance and the exclude list is ignored (spec 4.1). */
export function domainAllowed(url: string, filter: DomainFilter): boolean {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return false;
  }
  const include = filter.include ?? [];
  if (include.length > 0) return include.some((domain) => hostMatchesDomain(host, domain));
  return !(filter.exclude ?? []).some((domain) => hostMatchesDomain(host, domain));
}
