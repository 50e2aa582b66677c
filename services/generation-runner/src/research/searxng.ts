// SearXNG (self-hosted metasearch) through its JSON API. The instance is operator
// configuration, not user input, so it is called with plain fetch rather than the SSRF guard.
// The instance must list "json" under search.formats in settings.yml, or it answers 403.
import {
  distinctQuestions,
  fetchSearchJson,
  SearchProviderError,
  type SearchOutcome,
  type SearchProvider,
  type SearchResult,
} from "./search-provider.ts";

export interface SearxngConfig {
  baseUrl: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

interface SearxngResponse {
  results?: { url?: unknown; title?: unknown; content?: unknown }[];
  suggestions?: unknown[];
  answers?: unknown[];
}

export function searxngProvider(config: SearxngConfig): SearchProvider {
  const base = config.baseUrl.endsWith("/") ? config.baseUrl : `${config.baseUrl}/`;
  const timeoutMs = config.timeoutMs ?? 10_000;

  return {
    name: "searxng",
    async search(query: string, opts: { count: number }): Promise<SearchOutcome> {
      const url = new URL("search", base);
      url.searchParams.set("q", query);
      url.searchParams.set("format", "json");
      url.searchParams.set("categories", "general");
      const data = (await fetchSearchJson("searxng", url.href, {
        headers: { accept: "application/json" },
        timeoutMs,
        fetch: config.fetch,
        describeStatus: (status) =>
          status === 403 ? "forbidden; is the json format enabled in settings.yml?" : status === 429 ? "rate limited" : undefined,
      })) as SearxngResponse | null;
      if (!data || typeof data !== "object" || !Array.isArray(data.results)) {
        throw new SearchProviderError("searxng", "response has no results list");
      }

      const results: SearchResult[] = [];
      for (const item of data.results) {
        if (typeof item?.url !== "string" || !item.url) continue;
        results.push({
          url: item.url,
          title: typeof item.title === "string" ? item.title : "",
          snippet: typeof item.content === "string" ? item.content : "",
        });
        if (results.length >= opts.count) break;
      }
      // Newer SearXNG versions send answers as objects ({ answer, url }) rather than strings.
      const answers = (data.answers ?? []).map((a) => (typeof a === "object" && a ? (a as { answer?: unknown }).answer : a));
      return { results, questions: distinctQuestions([...(data.suggestions ?? []), ...answers]) };
    },
  };
}
