// The dashboard API under /dashboard/api: the session rides in its HttpOnly cookie (no script
// reads it), and every state change carries the CSRF token the session answer gave.
let csrfToken = "";

export const setCsrfToken = (token: string) => (csrfToken = token);

export interface Answer<T = any> {
  status: number;
  body: T;
}

export async function api<T = any>(method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<Answer<T>> {
  const headers: Record<string, string> = { accept: "application/json", ...extra };
  if (method !== "GET") headers["x-csrf-token"] = csrfToken;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`/dashboard/api${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: "same-origin" });
  const text = await response.text();
  let parsed: any = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = { message: text };
  }
  return { status: response.status, body: parsed };
}

/** A text answer (an article's content as sanitised HTML), or null when the call did not succeed. */
export async function apiText(path: string): Promise<string | null> {
  const response = await fetch(`/dashboard/api${path}`, { credentials: "same-origin" });
  return response.ok ? response.text() : null;
}
