// The dashboard's session cookie and its CSRF token. The cookie is HttpOnly (no script reads the
// session), SameSite=Lax (no cross-site POST carries it), Secure on https, and scoped to
// /dashboard, so it never travels with a /v1 request (which take keys only). The CSRF token is an
// HMAC of the session token: the gateway derives it from the cookie it receives and stores
// nothing, a page of the dashboard reads it from /dashboard/api/session (another origin cannot
// read that answer), and every state change must echo it in X-CSRF-Token.
import { createHmac, timingSafeEqual } from "node:crypto";

export const SESSION_COOKIE = "dashboard_session";
export const CSRF_HEADER = "x-csrf-token";
import { DASHBOARD_PATH } from "../../../services/kit/src/dashboard-links.ts";

export { DASHBOARD_PATH };

/** The session token the request's cookie carries, if any. */
export function sessionTokenOf(request: Request): string | undefined {
  const header = request.headers.get("cookie");
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const [name, ...value] = part.trim().split("=");
    if (name === SESSION_COOKIE) return decodeURIComponent(value.join("=")) || undefined;
  }
  return undefined;
}

/** Whether the cookie gets Secure: the request came over https, or the public address is https. */
export function secureCookies(request: Request, publicHttps: boolean): boolean {
  return publicHttps || new URL(request.url).protocol === "https:";
}

/** Set-Cookie for a new session, ending when the session does at the latest. */
export function sessionCookie(token: string, expiresAt: Date, secure: boolean): string {
  const maxAge = Math.max(0, Math.floor((expiresAt.getTime() - Date.now()) / 1000));
  return `${SESSION_COOKIE}=${encodeURIComponent(token)}; Path=${DASHBOARD_PATH}; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure ? "; Secure" : ""}`;
}

/** Set-Cookie that removes the session cookie. */
export function clearedSessionCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; Path=${DASHBOARD_PATH}; Max-Age=0; HttpOnly; SameSite=Lax${secure ? "; Secure" : ""}`;
}

export function csrfTokenFor(sessionToken: string): string {
  return createHmac("sha256", sessionToken).update("dashboard csrf").digest("base64url");
}

export function csrfMatches(sessionToken: string, sent: string | null): boolean {
  if (!sent) return false;
  const expected = Buffer.from(csrfTokenFor(sessionToken));
  const given = Buffer.from(sent);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Whether a state-changing request comes from the dashboard's own pages, by what the browser
 * says of its origin: Sec-Fetch-Site when sent, else Origin (a request without either is no
 * browser's cross-site request). The CSRF token is checked as well wherever a session acts.
 */
export function sameOrigin(request: Request): boolean {
  const site = request.headers.get("sec-fetch-site");
  if (site) return site === "same-origin";
  const origin = request.headers.get("origin");
  if (!origin) return true;
  const host = request.headers.get("host");
  try {
    return new URL(origin).host === (host ?? new URL(request.url).host);
  } catch {
    return false;
  }
}
