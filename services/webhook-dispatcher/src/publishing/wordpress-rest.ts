// Requests to a WordPress site's REST API, as one user (an application password over HTTP Basic
// auth). The API's root is where the site says it is: `/wp-json/` with pretty permalinks,
// `/?rest_route=/` without them, or anywhere a plugin moved it on the site's own origin; a root
// announced on another origin is refused, never sent the credential.
import { errorOfFailure, errorOfResponse, isRetryableStatus, WordPressError } from "./wordpress-errors.ts";

export interface WordPressSiteAccess {
  /** The site's address, e.g. https://blog.example.com or https://example.com/blog. */
  siteUrl: string;
  /** The WordPress user's login name. */
  username: string;
  /** An application password of that user (Users → Profile → Application Passwords). */
  applicationPassword: string;
}

export interface WordPressRestOptions extends WordPressSiteAccess {
  /** Per request; uploads get twice this. */
  timeoutMs?: number;
  fetch?: typeof fetch;
  userAgent?: string;
}

export type QueryValue = string | number | boolean | readonly (string | number)[] | undefined;

export interface RestCall {
  method?: "GET" | "POST" | "DELETE";
  query?: Record<string, QueryValue>;
  /** A JSON body. */
  json?: unknown;
  /** A raw body (an upload), with its headers. */
  body?: BodyInit;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

export interface RestAnswer<T> {
  data: T;
  headers: Headers;
}

export interface WordPressRest {
  /** The REST root, found once. */
  root(): Promise<string>;
  /** Calls `route` (e.g. "wp/v2/posts") under the root; a failure status throws a WordPressError. */
  call<T>(route: string, call?: RestCall): Promise<RestAnswer<T>>;
}

const API_REL = "https://api.w.org/";

/** The API root a `Link` header announces (rel="https://api.w.org/"), resolved against the page's URL. */
export function restRootOfLinkHeader(link: string | null, pageUrl: string): string | undefined {
  for (const entry of (link ?? "").split(/,\s*(?=<)/)) {
    const match = /^<([^>]*)>(.*)$/.exec(entry.trim());
    const rel = match && /;\s*rel\s*=\s*"?([^";]*)"?/i.exec(match[2]!);
    if (match && rel && rel[1]!.split(/\s+/).includes(API_REL)) return new URL(match[1]!, pageUrl).href;
  }
  return undefined;
}

/** The URL of `route` under `root`, whichever form the root takes. */
export function routeUrl(root: string, route: string, query: Record<string, QueryValue> = {}): URL {
  const url = new URL(root);
  const path = route.replace(/^\/+/, "");
  const inQuery = url.searchParams.get("rest_route");
  if (inQuery !== null) url.searchParams.set("rest_route", inQuery.replace(/\/?$/, "/") + path);
  else url.pathname = url.pathname.replace(/\/?$/, "/") + path;
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined) continue;
    url.searchParams.set(key, Array.isArray(value) ? value.join(",") : String(value));
  }
  return url;
}

const siteHome = (siteUrl: string) => {
  const url = new URL(siteUrl);
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new WordPressError({ retryable: false, code: "bad_site_url", message: `not a web address: ${url.protocol}` });
  url.hash = "";
  return url.href.replace(/\/?$/, "/");
};

export function wordPressRest(options: WordPressRestOptions): WordPressRest {
  const fetchFn = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const authorization = `Basic ${Buffer.from(`${options.username}:${options.applicationPassword}`).toString("base64")}`;
  // What must never reach an error message: the password as typed, without its spaces, and the header.
  const secrets = [options.applicationPassword, options.applicationPassword.replace(/\s+/g, ""), authorization.slice("Basic ".length)];
  const userAgent = options.userAgent ?? "article-service-publisher";
  let root: Promise<string> | undefined;

  async function discoverRoot(): Promise<string> {
    const home = siteHome(options.siteUrl);
    let response: Response;
    try {
      response = await fetchFn(home, { headers: { "user-agent": userAgent }, redirect: "follow", signal: AbortSignal.timeout(timeoutMs) });
    } catch (error) {
      throw errorOfFailure(error, `GET ${home}`, secrets);
    }
    await response.body?.cancel().catch(() => {});
    if (isRetryableStatus(response.status)) throw errorOfResponse(response, undefined, `GET ${home}`, secrets);
    // A site that hides the header (some security plugins do) still usually serves the default root.
    const announced = restRootOfLinkHeader(response.headers.get("link"), response.url || home) ?? new URL("wp-json/", home).href;
    // The application password goes to the root: only ever to the site's own origin, whatever its
    // home page (or whatever answers for it) announces.
    if (new URL(announced).origin !== new URL(home).origin) {
      throw new WordPressError({
        retryable: false,
        code: "foreign_rest_root",
        message: `GET ${home}: the site announces its REST API at ${new URL(announced).origin}, another origin than ${new URL(home).origin}; credentials are only sent to the site's own origin (set the site's address to the origin that serves it)`,
        request: `GET ${home}`,
      });
    }
    return announced;
  }

  async function call<T>(route: string, c: RestCall = {}): Promise<RestAnswer<T>> {
    const method = c.method ?? "GET";
    const request = `${method} ${route}`;
    const url = routeUrl(await rest.root(), route, c.query);
    const headers: Record<string, string> = { authorization, accept: "application/json", "user-agent": userAgent, ...c.headers };
    let body = c.body;
    if (c.json !== undefined) {
      body = JSON.stringify(c.json);
      headers["content-type"] = "application/json";
    }
    let response: Response;
    let text: string;
    try {
      response = await fetchFn(url, { method, headers, body, redirect: "follow", signal: AbortSignal.timeout(c.timeoutMs ?? timeoutMs) });
      text = await response.text();
    } catch (error) {
      throw errorOfFailure(error, request, secrets);
    }
    let data: unknown;
    try {
      data = text ? JSON.parse(text) : undefined;
    } catch {
      data = undefined;
    }
    if (!response.ok) throw errorOfResponse(response, data, request, secrets);
    if (data === undefined) {
      throw new WordPressError({ retryable: false, status: response.status, code: "not_json", message: `${request}: the site did not answer with JSON: is ${options.siteUrl} a WordPress site with its REST API on?`, request });
    }
    return { data: data as T, headers: response.headers };
  }

  const rest: WordPressRest = {
    root() {
      root ??= discoverRoot().catch((error) => {
        root = undefined; // a failed discovery is tried again on the next call
        throw error;
      });
      return root;
    },
    call,
  };
  return rest;
}
