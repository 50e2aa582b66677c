// Research for one article run: gathered once, checkpointed, recorded on the article
// through the article-store contract, and rendered into {research}.
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import type { Article, ArticleLifecycleService } from "../../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import type { Db } from "../db/client.ts";
import { researchOf, saveResearch, type StoredResearch } from "../domain/checkpoints.ts";
import { StepFailure } from "../domain/model-call.ts";
import { createPageFetcher } from "./page-fetcher.ts";
import { searchProviderFromEnv } from "./providers.ts";
import { gatherResearch, renderResearch, type FetchPage } from "./research.ts";
import type { SearchProvider } from "./search-provider.ts";

export interface ResearchTools {
  provider: SearchProvider;
  fetchPage: FetchPage;
}

/**
 * The configured search engine and page fetcher. Without SEARCH_PROVIDER, a runner next to the
 * bundled simulator searches the simulator (SearXNG-style) and may fetch from that one origin
 * only; private addresses stay refused unless ALLOW_PRIVATE_URLS. Undefined: no research possible.
 */
export function researchToolsFromEnv(env: Record<string, string | undefined>, allowPrivate: boolean): ResearchTools | undefined {
  const simulator = env.SIMULATOR_URL?.trim();
  const useSimulator = !env.SEARCH_PROVIDER?.trim() && !!simulator;
  const provider = searchProviderFromEnv(useSimulator ? { ...env, SEARCH_PROVIDER: "searxng", SEARXNG_URL: simulator } : env);
  if (!provider) return undefined;
  const trustedOrigins = useSimulator ? [new URL(simulator!).origin] : [];
  return { provider, fetchPage: createPageFetcher({ allowPrivate, trustedOrigins }) };
}

/** The article's research, gathered on first need and recorded on the article; no usable source is a step failure (retried, then fatal). */
export async function articleResearch(
  db: Db,
  lifecycle: Client<typeof ArticleLifecycleService>,
  tools: ResearchTools | undefined,
  article: Article,
): Promise<StoredResearch> {
  const stored = await researchOf(db, article.externalId);
  if (stored) {
    // Recorded again in case the worker died between the checkpoint and the first recording.
    await recordSources(lifecycle, article.externalId, stored);
    return stored;
  }
  if (!tools) throw new StepFailure("research is enabled but no search provider is configured (SEARCH_PROVIDER)");
  const settings = article.settings!;
  const query = (article.targetKeyword ?? "").trim() || article.title;
  let found;
  try {
    found = await gatherResearch(
      {
        query,
        maxSources: settings.researchMaxSources || undefined,
        minContentWords: settings.researchMinContentWords || undefined,
        maxWordsPerSource: settings.researchMaxWordsPerSource || undefined,
        includeDomains: settings.researchIncludeDomains,
        // Creation stores the resolved list (the default four unless the request said otherwise), so [] means none.
        excludeDomains: settings.researchExcludeDomains,
      },
      tools,
    );
  } catch (error) {
    throw new StepFailure(`research search failed: ${(error as Error).message}`);
  }
  if (found.sources.length === 0) {
    const why = found.discarded.slice(0, 5).map((d) => `${d.url}: ${d.reason}`).join("; ");
    throw new StepFailure(`research found no usable sources for "${query}"${why ? ` (${why})` : " (the search returned no results)"}`);
  }
  const research = await saveResearch(db, article.externalId, { query, sources: found.sources, questions: found.questions });
  await recordSources(lifecycle, article.externalId, research);
  return research;
}

/** Records the sources on the article (replacing any earlier set, so repeating it is harmless). */
export async function recordSources(lifecycle: Client<typeof ArticleLifecycleService>, externalId: string, research: StoredResearch) {
  await lifecycle.recordResearchSources({
    externalId,
    sources: research.sources.map((s) => ({
      position: s.index,
      title: s.title,
      url: s.url,
      wordCount: s.wordCount,
      fetchedAt: timestampFromDate(new Date(s.fetchedAt)),
    })),
  });
}

export const researchText = (research: StoredResearch | undefined): string => (research ? renderResearch(research.sources) : "");
