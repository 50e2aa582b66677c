// Real HTTP into the gateway.
export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** Sent as-is (e.g. malformed JSON). */
  rawBody?: string;
  headers?: Record<string, string>;
}

export async function call<T = any>(baseUrl: string, method: string, path: string, opts: RequestOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { accept: "application/json", ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  let body: string | undefined;
  if (opts.rawBody !== undefined) body = opts.rawBody;
  else if (opts.body !== undefined) body = JSON.stringify(opts.body);
  if (body !== undefined) headers["content-type"] ??= "application/json";
  return answerOf(await fetch(baseUrl + path, { method, headers, body }));
}

/** A response's status, headers and body: parsed JSON, or the text when it is not JSON (tests that expect JSON fail on it). */
export async function answerOf<T = any>(res: Response): Promise<ApiResponse<T>> {
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // left as text
  }
  return { status: res.status, body: parsed, headers: res.headers };
}

/** A client bound to one base URL and, optionally, one token. */
export function apiClient(baseUrl: string, token?: string) {
  const send = <T = any>(method: string, path: string, opts: RequestOptions = {}) => call<T>(baseUrl, method, path, { token, ...opts });
  return {
    get: <T = any>(path: string, opts?: RequestOptions) => send<T>("GET", path, opts),
    post: <T = any>(path: string, body?: unknown, opts?: RequestOptions) => send<T>("POST", path, { body, ...opts }),
    patch: <T = any>(path: string, body?: unknown, opts?: RequestOptions) => send<T>("PATCH", path, { body, ...opts }),
    put: <T = any>(path: string, body?: unknown, opts?: RequestOptions) => send<T>("PUT", path, { body, ...opts }),
    delete: <T = any>(path: string, opts?: RequestOptions) => send<T>("DELETE", path, opts),
    withToken: (other: string) => apiClient(baseUrl, other),
  };
}
export type ApiClient = ReturnType<typeof apiClient>;
