// Picks the research search engine from the environment. Unset SEARCH_PROVIDER means research
// is unavailable (the caller reports that); a half-configured provider is a start-up error.
import { braveProvider } from "./brave.ts";
import { searxngProvider } from "./searxng.ts";
import type { SearchProvider } from "./search-provider.ts";

export function searchProviderFromEnv(env: Record<string, string | undefined>): SearchProvider | undefined {
  const choice = env.SEARCH_PROVIDER?.trim().toLowerCase();
  if (!choice) return undefined;
  if (choice === "searxng") {
    const baseUrl = env.SEARXNG_URL?.trim();
    if (!baseUrl) throw new Error("SEARXNG_URL is required when SEARCH_PROVIDER=searxng");
    let parsed: URL;
    try {
      parsed = new URL(baseUrl);
    } catch {
      throw new Error(`SEARXNG_URL must be an http(s) URL, got "${baseUrl}"`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw new Error(`SEARXNG_URL must be an http(s) URL, got "${baseUrl}"`);
    }
    return searxngProvider({ baseUrl });
  }
  if (choice === "brave") {
    const apiKey = env.BRAVE_API_KEY?.trim();
    if (!apiKey) throw new Error("BRAVE_API_KEY is required when SEARCH_PROVIDER=brave");
    return braveProvider({ apiKey });
  }
  throw new Error(`SEARCH_PROVIDER must be "searxng" or "brave", got "${env.SEARCH_PROVIDER}"`);
}
