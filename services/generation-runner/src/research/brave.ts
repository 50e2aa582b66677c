// Brave Search API (web search). Questions come from the FAQ block Brave attaches to a query
// (faq.results[].question) and from forum discussions whose question is spelled out.
import {
  distinctQuestions,
  fetchSearchJson,
  SearchProviderError,
  type SearchOutcome,
  type SearchProvider,
  type SearchResult,
} from "./search-provider.ts";

export interface BraveConfig {
  apiKey: string;
  /** Overridable so tests can point at a local fake. */
  baseUrl?: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

// Brave caps `count` for web search at 20.
const MAX_COUNT = 20;

interface BraveResponse {
  web?: { results?: { url?: unknown; title?: unknown; description?: unknown }[] };
  faq?: { results?: { question?: unknown }[] };
  discussions?: { results?: { title?: unknown; data?: { question?: unknown; title?: unknown } }[] };
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'", "#x27": "'", apos: "'", nbsp: " " };

/** Brave highlights query terms with <strong> in titles and descriptions; keep the words only. */
function plainText(value: unknown): string {
  if (typeof value !== "string") return "";
  return value
    .replace(/<[^>]*>/g, "")
    .replace(/&(amp|lt|gt|quot|#39|#x27|apos|nbsp);/g, (_, name: string) => ENTITIES[name]!)
    .replace(/\s+/g, " ")
    .trim();
}

function describeStatus(status: number): string | undefined {
  if (status === 401 || status === 403) return "the API key was rejected (check BRAVE_API_KEY)";
  if (status === 422) return "the request was refused (invalid subscription token or parameters)";
  if (status === 429) return "rate limit or monthly quota exceeded";
  if (status >= 500) return "Brave Search is unavailable";
  return undefined;
}

export function braveProvider(config: BraveConfig): SearchProvider {
  const base = (config.baseUrl ?? "https://api.search.brave.com").replace(/\/+$/, "");
  const timeoutMs = config.timeoutMs ?? 10_000;

  return {
    name: "brave",
    async search(query: string, opts: { count: number }): Promise<SearchOutcome> {
      const url = new URL(`${base}/res/v1/web/search`);
      url.searchParams.set("q", query);
      url.searchParams.set("count", String(Math.max(1, Math.min(MAX_COUNT, opts.count))));
      const data = (await fetchSearchJson("brave", url.href, {
        headers: { accept: "application/json", "x-subscription-token": config.apiKey },
        timeoutMs,
        fetch: config.fetch,
        describeStatus,
      })) as BraveResponse | null;
      if (!data || typeof data !== "object") throw new SearchProviderError("brave", "response is not an object");

      const results: SearchResult[] = [];
      for (const item of data.web?.results ?? []) {
        if (typeof item?.url !== "string" || !item.url) continue;
        results.push({ url: item.url, title: plainText(item.title), snippet: plainText(item.description) });
        if (results.length >= opts.count) break;
      }
      const faq = (data.faq?.results ?? []).map((qa) => plainText(qa?.question));
      const discussions = (data.discussions?.results ?? []).map((d) => plainText(d?.data?.question ?? d?.data?.title ?? d?.title));
      return { results, questions: distinctQuestions([...faq, ...discussions]) };
    },
  };
}
