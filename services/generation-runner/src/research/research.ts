// Research for a pipeline step's {research} variable: search, fetch the top pages, keep the
// readable, distinct ones in search rank order, and number them so prompts can cite [n].
import { createHash } from "node:crypto";
import { DEFAULT_EXCLUDED_DOMAINS, domainAllowed, type DomainFilter } from "../../../kit/src/rules/research-domains.ts";
import type { ExtractedPage } from "./extract.ts";
import type { SearchProvider, SearchResult } from "./search-provider.ts";
import { countWords, truncateWords } from "../../../kit/src/words.ts";
import { plainText } from "../../../kit/src/rules/citations.ts";

export const RESEARCH_DEFAULTS = { maxSources: 5, minContentWords: 100, maxWordsPerSource: 1000, concurrency: 4 } as const;

// Asking the engine for spare results leaves room for discarded pages without a second search.
const MAX_SEARCH_RESULTS = 30;
const MAX_QUESTIONS = 10;

export interface ResearchInput {
  query: string;
  maxSources?: number;
  minContentWords?: number;
  maxWordsPerSource?: number;
  includeDomains?: string[];
  /** Omitted means DEFAULT_EXCLUDED_DOMAINS; an explicit [] excludes nothing. */
  excludeDomains?: string[];
}

export type FetchPage = (url: string) => Promise<{ html: string; finalUrl: string }>;

export interface ResearchDeps {
  provider: SearchProvider;
  fetchPage: FetchPage;
  concurrency?: number;
  now?: () => Date;
}

export interface ResearchSource {
  /** 1-based citation number, as in [1]. */
  index: number;
  /** Plain text (citations.ts plainText). */
  title: string;
  /** The address fetched, after redirects, without credentials or fragment (citableUrl). */
  url: string;
  /** The site's name (og:site_name, else the host), plain text. */
  siteName: string;
  text: string;
  wordCount: number;
  /** ISO 8601 time the page was fetched. */
  fetchedAt: string;
}

export interface DiscardedPage {
  url: string;
  reason: string;
}

export interface Research {
  sources: ResearchSource[];
  questions: string[];
  discarded: DiscardedPage[];
}

type PageOutcome =
  | {
      usable: true;
      title: string;
      url: string;
      siteName: string;
      text: string;
      wordCount: number;
      fetchedAt: string;
      canonicalKey: string;
      textHash: string;
    }
  | { usable: false; reason: string };
type UsablePage = Extract<PageOutcome, { usable: true }>;

// Tracking parameters that make one page look like several.
const TRACKING_PARAM = /^(utm_[a-z]+|fbclid|gclid|mc_cid|mc_eid|ref_src)$/i;

/**
 * The address a reader is sent to: the page as fetched (after redirects), with any credentials
 * and fragment taken off and nothing added; tracking parameters the page came with stay, as
 * removing them could change the page. A URL with neither is kept exactly as fetched.
 */
export function citableUrl(url: string): string {
  try {
    const u = new URL(url);
    if (!u.username && !u.password && !u.hash && !url.includes("#")) return url;
    u.username = "";
    u.password = "";
    u.hash = "";
    return u.href;
  } catch {
    return url;
  }
}

/** Compares URLs as pages: no fragment, no tracking parameters, no trailing slash, no default port. */
export function pageKey(url: string): string {
  try {
    const u = new URL(url);
    u.hash = "";
    for (const name of Array.from(u.searchParams.keys())) if (TRACKING_PARAM.test(name)) u.searchParams.delete(name);
    u.searchParams.sort();
    const path = u.pathname.length > 1 ? u.pathname.replace(/\/+$/, "") : u.pathname;
    return `${u.protocol}//${u.host.toLowerCase()}${path}${u.search}`;
  } catch {
    return url;
  }
}

function textFingerprint(text: string): string {
  return createHash("sha256").update(text.toLowerCase().replace(/\s+/g, " ").trim()).digest("hex");
}

function positive(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) && value >= 1 ? Math.floor(value) : fallback;
}

interface Selection {
  chosen: number[];
  duplicates: Map<number, string>;
}

/** Walks completed pages in rank order, keeping the first of each canonical URL and text. */
function selectSources(outcomes: (PageOutcome | undefined)[], maxSources: number): Selection {
  const chosen: number[] = [];
  const duplicates = new Map<number, string>();
  const byUrl = new Map<string, number>();
  const byText = new Map<string, number>();
  outcomes.forEach((outcome, rank) => {
    if (!outcome?.usable) return;
    const sameUrl = byUrl.get(outcome.canonicalKey);
    const sameText = byText.get(outcome.textHash);
    const original = sameUrl ?? sameText;
    if (original !== undefined) {
      const why = sameUrl !== undefined ? "same canonical URL" : "same text";
      duplicates.set(rank, `duplicate of ${(outcomes[original] as UsablePage).url} (${why})`);
      return;
    }
    byUrl.set(outcome.canonicalKey, rank);
    byText.set(outcome.textHash, rank);
    if (chosen.length < maxSources) chosen.push(rank);
  });
  return { chosen, duplicates };
}

export async function gatherResearch(input: ResearchInput, deps: ResearchDeps): Promise<Research> {
  const query = input.query.trim();
  if (!query) throw new Error("research needs a search query (target_keyword or title)");
  const maxSources = positive(input.maxSources, RESEARCH_DEFAULTS.maxSources);
  const minWords = positive(input.minContentWords, RESEARCH_DEFAULTS.minContentWords);
  const maxWords = positive(input.maxWordsPerSource, RESEARCH_DEFAULTS.maxWordsPerSource);
  const concurrency = positive(deps.concurrency, RESEARCH_DEFAULTS.concurrency);
  const now = deps.now ?? (() => new Date());
  const include = input.includeDomains ?? [];
  const filter: DomainFilter = {
    include,
    exclude: input.excludeDomains ?? DEFAULT_EXCLUDED_DOMAINS,
  };
  const domainRefusal = include.length > 0 ? "not in the include-domains list" : "excluded domain";

  const count = Math.min(MAX_SEARCH_RESULTS, Math.max(10, maxSources * 3));
  const outcome = await deps.provider.search(query, { count });

  const discarded: DiscardedPage[] = [];
  const candidates: SearchResult[] = [];
  const seen = new Set<string>();
  for (const result of outcome.results) {
    let protocol: string;
    try {
      protocol = new URL(result.url).protocol;
    } catch {
      protocol = "";
    }
    if (protocol !== "http:" && protocol !== "https:") {
      discarded.push({ url: result.url, reason: "not an http(s) URL" });
    } else if (!domainAllowed(result.url, filter)) {
      discarded.push({ url: result.url, reason: domainRefusal });
    } else if (seen.has(pageKey(result.url))) {
      discarded.push({ url: result.url, reason: "listed twice by the search engine" });
    } else {
      seen.add(pageKey(result.url));
      candidates.push(result);
    }
  }

  const examine = async (candidate: SearchResult): Promise<PageOutcome> => {
    let page: { html: string; finalUrl: string };
    try {
      page = await deps.fetchPage(candidate.url);
    } catch (err) {
      return { usable: false, reason: `fetch failed: ${(err as Error).message}` };
    }
    const fetchedAt = now().toISOString();
    const finalUrl = page.finalUrl || candidate.url;
    if (finalUrl !== candidate.url && !domainAllowed(finalUrl, filter)) {
      return { usable: false, reason: `redirected to ${finalUrl}: ${domainRefusal}` };
    }
    let extracted: ExtractedPage;
    try {
      // Loaded on first use: the DOM parser holds about 15 MiB, and most runs do no research.
      const { extractMainText } = await import("./extract.ts");
      extracted = extractMainText(page.html, finalUrl);
    } catch (err) {
      return { usable: false, reason: `unreadable page: ${(err as Error).message}` };
    }
    const words = countWords(extracted.text);
    if (words === 0) return { usable: false, reason: "no readable text" };
    if (words < minWords) return { usable: false, reason: `too short: ${words} words (minimum ${minWords})` };
    const text = words > maxWords ? truncateWords(extracted.text, maxWords) : extracted.text;
    const url = citableUrl(finalUrl);
    return {
      usable: true,
      // Page text, never markup: it reaches prompts, clients and published posts.
      title: plainText(extracted.title || candidate.title || "") || url,
      url,
      siteName: plainText(extracted.siteName ?? "", 100) || new URL(url).hostname,
      text,
      wordCount: Math.min(words, maxWords),
      fetchedAt,
      canonicalKey: pageKey(extracted.canonicalUrl ?? finalUrl),
      textHash: textFingerprint(extracted.text),
    };
  };

  // Pages are taken in rank order, so once enough distinct sources are in hand every page not
  // yet started ranks below them and need not be fetched.
  const outcomes: (PageOutcome | undefined)[] = new Array(candidates.length);
  const enough = () => selectSources(outcomes, maxSources).chosen.length >= maxSources;
  let next = 0;
  const worker = async () => {
    while (next < candidates.length && !enough()) {
      const rank = next++;
      outcomes[rank] = await examine(candidates[rank]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, candidates.length) }, worker));

  const { chosen, duplicates } = selectSources(outcomes, maxSources);
  const chosenSet = new Set(chosen);
  outcomes.forEach((page, rank) => {
    if (!page || chosenSet.has(rank)) return;
    const url = candidates[rank]!.url;
    if (!page.usable) discarded.push({ url, reason: page.reason });
    else discarded.push({ url, reason: duplicates.get(rank) ?? `not needed: ${maxSources} sources already chosen` });
  });

  const sources = chosen.map((rank, i): ResearchSource => {
    const page = outcomes[rank] as UsablePage;
    return { index: i + 1, title: page.title, url: page.url, siteName: page.siteName, text: page.text, wordCount: page.wordCount, fetchedAt: page.fetchedAt };
  });
  return { sources, questions: outcome.questions.slice(0, MAX_QUESTIONS), discarded };
}

/** The {research} prompt text: each source headed "[n] Title — URL", then its text. */
export function renderResearch(sources: readonly Pick<ResearchSource, "index" | "title" | "url" | "text">[]): string {
  return sources.map((s) => `[${s.index}] ${s.title} — ${s.url}\n${s.text}`).join("\n\n");
}
