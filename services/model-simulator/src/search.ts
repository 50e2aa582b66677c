// A SearXNG-compatible `/search?format=json` whose results link to pages this simulator serves,
// with a stub page and a duplicate mixed in so research min-words and dedupe rules get exercised.

import { withoutDirectives } from "./directives.ts";
import { slugify } from "./json-from-schema.ts";
import { pageArticle, pageSlug, readPageSlug, type PageKind } from "./pages.ts";
import { hashText } from "./prompt-seed.ts";

export interface SearxResult {
  url: string;
  title: string;
  content: string;
  engine: string;
  engines: string[];
  parsed_url: string[];
  template: string;
  positions: number[];
  score: number;
  category: string;
  publishedDate: string | null;
  thumbnail: string | null;
  priority: string;
}

export interface SearxResponse {
  query: string;
  number_of_results: number;
  results: SearxResult[];
  answers: string[];
  corrections: string[];
  infoboxes: unknown[];
  /** SearXNG carries related searches here; we fill it with "people also ask" questions. */
  suggestions: string[];
  unresponsive_engines: [string, string][];
}

const ENGINES = [["duckduckgo", "brave"], ["bing"], ["google", "duckduckgo"], ["brave"], ["mojeek", "bing"], ["qwant"]];
// Page mix for an ordinary query: mostly full articles, one stub, one copy of the first article.
const USUAL_MIX: [PageKind, number][] = [["guide", 1], ["guide", 2], ["short", 1], ["guide", 3], ["copy", 1], ["guide", 4], ["guide", 5], ["guide", 6]];
const UNUSABLE_MIX: [PageKind, number][] = [1, 2, 3, 4, 5, 6].map((n) => ["short", n]);
// Words that steer the simulator, not part of the topic.
const QUERY_SWITCHES = /\b(?:nothing-usable|no-results)\b/gi;

/** The topic a query is about: its plain words, without switches or search operators. */
export function queryTopic(query: string): string {
  return withoutDirectives(query)
    .replace(QUERY_SWITCHES, " ")
    .split(/\s+/)
    .filter((word) => word && !word.includes(":") && !word.startsWith("!"))
    .slice(0, 6)
    .join(" ");
}

export function search(query: string, origin: string, pageNumber = 1): SearxResponse {
  const topicSlug = slugify(queryTopic(query) || "general information").slice(0, 60).replace(/-+$/, "");
  const topic = topicSlug.replace(/-/g, " ");
  const mix = /no-results/i.test(query) || pageNumber > 1 ? [] : /nothing-usable/i.test(query) ? UNUSABLE_MIX : USUAL_MIX;
  const { protocol, host } = new URL(origin);
  const results = mix.map(([kind, number], i): SearxResult => {
    const slug = pageSlug(topicSlug, kind, number);
    const article = pageArticle(readPageSlug(slug)!);
    const firstParagraph = article.blocks.find((b) => !b.startsWith("## ")) ?? "";
    const engines = ENGINES[(hashText(slug) + i) % ENGINES.length];
    return {
      url: `${origin}/pages/${slug}`,
      title: `${article.title} | ${article.site}`,
      content: firstParagraph.split(/\s+/).slice(0, 28).join(" ") + "…",
      engine: engines[0],
      engines,
      parsed_url: [protocol.replace(":", ""), host, `/pages/${slug}`, "", "", ""],
      template: "default.html",
      positions: [i + 1],
      score: Number((engines.length / (i + 1)).toFixed(4)),
      category: "general",
      publishedDate: `${article.publishedAt}T08:00:00`,
      thumbnail: null,
      priority: "",
    };
  });
  return {
    query,
    number_of_results: results.length,
    results,
    answers: [],
    corrections: [],
    infoboxes: [],
    suggestions: mix.length === 0 ? [] : [
      `What is ${topic}?`,
      `How does ${topic} work?`,
      `Is ${topic} worth it?`,
      `How do I get started with ${topic}?`,
    ],
    unresponsive_engines: [],
  };
}
