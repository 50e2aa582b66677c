// The web search behind research: ranked results plus the questions searchers ask.

export interface SearchResult {
  url: string;
  title: string;
  snippet: string;
}

export interface SearchOutcome {
  /** In the engine's rank order. */
  results: SearchResult[];
  /** "People also ask" style questions; they guide the FAQ section toward real searcher questions. */
  questions: string[];
}

export interface SearchProvider {
  readonly name: string;
  search(query: string, opts: { count: number }): Promise<SearchOutcome>;
}

/** A search that could not be answered; `status` is the HTTP status when there was one. */
export class SearchProviderError extends Error {
  override readonly name = "SearchProviderError";
  constructor(
    readonly provider: string,
    message: string,
    readonly status?: number,
    /** The answer's headers, when there was one: a 429's retry delay and the engine's limits. */
    readonly headers?: Headers,
  ) {
    super(`${provider}: ${message}`);
  }
}

/** Keeps strings that read as questions, trimmed and without repeats (case-insensitive). */
export function distinctQuestions(candidates: unknown[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const candidate of candidates) {
    if (typeof candidate !== "string") continue;
    const question = candidate.replace(/\s+/g, " ").trim();
    if (!question.endsWith("?")) continue;
    const key = question.toLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(question);
  }
  return out;
}

/** GETs a JSON search API with a timeout, turning every failure into one SearchProviderError. */
export async function fetchSearchJson(
  provider: string,
  url: string,
  init: { headers?: Record<string, string>; timeoutMs: number; fetch?: typeof fetch; describeStatus?: (status: number) => string | undefined },
): Promise<unknown> {
  const doFetch = init.fetch ?? fetch;
  let response: Response;
  try {
    response = await doFetch(url, { headers: init.headers, signal: AbortSignal.timeout(init.timeoutMs) });
  } catch (err) {
    const name = (err as Error).name;
    if (name === "TimeoutError" || name === "AbortError") {
      throw new SearchProviderError(provider, `no answer within ${init.timeoutMs} ms`);
    }
    throw new SearchProviderError(provider, `unreachable (${(err as Error).message})`);
  }
  const text = await response.text().catch(() => "");
  if (!response.ok) {
    const hint = init.describeStatus?.(response.status) ?? "request failed";
    const detail = text.trim().slice(0, 200);
    throw new SearchProviderError(provider, `HTTP ${response.status}: ${hint}${detail ? ` (${detail})` : ""}`, response.status, response.headers);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new SearchProviderError(provider, "answered with something other than JSON", response.status);
  }
}
