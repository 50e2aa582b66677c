// The search engine behind research, paced like the models (domain/paced-call.ts): one budget per
// engine (`search:<name>`) shared by every replica, its limit SEARCH_REQUESTS_PER_MINUTE when set,
// else learned from its answers. A 429 pauses it for the time the engine gives, in OpenAI's headers
// or Brave's (`X-RateLimit-Limit: 1, 15000` per second and per month, `X-RateLimit-Reset` in
// seconds): a spent monthly quota holds research until it renews or the outage bound passes.
// Searches take turns in arrival order (they are one call per article).
import { CallFailed, type Pacer } from "../domain/paced-call.ts";
import type { ConfiguredLimits } from "../scheduler/index.ts";
import { SearchProviderError, type SearchOutcome, type SearchProvider } from "./search-provider.ts";

const SEARCH_TIMEOUT_MS = 15_000;

export function pacedSearch(provider: SearchProvider, pacer: Pacer, requestsPerMinute: number | null): SearchProvider {
  const limits: ConfiguredLimits = { requestsPerMinute, tokensPerMinute: null, maxConcurrentCalls: null };
  const target = { id: `search:${provider.name}`, limits };
  return {
    name: provider.name,
    async search(query, opts): Promise<SearchOutcome> {
      try {
        const { value } = await pacer.run([target], { account: "research", since: Date.now(), tokens: 0 }, SEARCH_TIMEOUT_MS, {
          call: async () => ({ value: await provider.search(query, opts) }),
          // A search answered is the only sign the engine is back.
          probe: () => provider.search(query, { count: 1 }),
        });
        return value;
      } catch (error) {
        if (error instanceof CallFailed && error.last instanceof SearchProviderError) throw error.last;
        throw error;
      }
    },
  };
}
