// Web pages the search results point at, served from the simulator's own origin so research runs
// offline. Each page wraps a coherent article in the clutter real sites have (nav, cookie banner,
// ads, footer) so content extraction is exercised for real. Everything derives from the slug.

import { diceFor } from "./prompt-seed.ts";
import { countWords } from "../../kit/src/words.ts";
import { keywordsFor, titleCase } from "./prompt-reading.ts";
import { writeDescription, writeParagraphs, sectionHeadings, type Subject } from "./writer.ts";

/** `<topic-slug>--guide-N` (full article), `--short-N` (a stub), `--copy-N` (duplicate of guide-N). */
export type PageKind = "guide" | "short" | "copy";

export interface PageAddress {
  topic: string;
  kind: PageKind;
  number: number;
  slug: string;
  /** The page whose text this one carries (itself unless it is a copy). */
  canonicalSlug: string;
}

export interface PageArticle {
  title: string;
  site: string;
  author: string;
  publishedAt: string;
  description: string;
  /** Blocks in reading order: `## ` prefix marks a subheading. */
  blocks: string[];
}

const SHORT_PAGE_WORDS = 45;
const SITES = ["Field Notes", "Practical Guides", "The Weekly Review", "Home & Method", "Everyday Expert", "Plain Answers", "The Long Read", "Workbench Journal"];
const AUTHORS = ["Jordan Avery", "Priya Raman", "Marcus Bell", "Elena Novak", "Sam Okafor", "Hannah Lindqvist", "Diego Morales", "Claire Dubois"];
const TITLES = [
  "The Complete Guide to {T}",
  "{T}: What Experienced People Actually Recommend",
  "Everything You Need to Know About {T}",
  "{T} Explained: A Practical Introduction",
  "How to Get Started with {T}",
  "{T}: Common Mistakes and How to Avoid Them",
  "A Beginner's Checklist for {T}",
  "What Nobody Tells You About {T}",
];

export function pageSlug(topicSlug: string, kind: PageKind, number: number): string {
  return `${topicSlug}--${kind}-${number}`;
}

export function readPageSlug(slug: string): PageAddress | null {
  if (!/^[a-z0-9]+(?:-[a-z0-9]+)*(?:--(?:guide|short|copy)-\d{1,3})?$/.test(slug)) return null;
  const match = /^(.*)--(guide|short|copy)-(\d+)$/.exec(slug);
  const topicSlug = match ? match[1] : slug;
  const kind = (match?.[2] ?? "guide") as PageKind;
  const number = match ? Number(match[3]) : 1;
  return {
    topic: topicSlug.replace(/-/g, " "),
    kind,
    number,
    slug,
    canonicalSlug: kind === "copy" ? pageSlug(topicSlug, "guide", number) : slug,
  };
}

export function pageArticle(address: PageAddress): PageArticle {
  // Seeded by the canonical slug so a copy carries exactly the original's text.
  const dice = diceFor(address.canonicalSlug);
  const subject: Subject = { topic: address.topic, keywords: keywordsFor(address.topic, address.topic) };
  // Stubs take titles from further down the list so they do not share a title with guide-N.
  const titleIndex = address.number - 1 + (address.kind === "short" ? 3 : 0);
  const title = TITLES[titleIndex % TITLES.length].replace("{T}", titleCase(address.topic));
  const month = dice.between(1, 12);
  const day = dice.between(1, 28);
  const meta = {
    title,
    site: SITES[(address.number - 1) % SITES.length],
    author: dice.pick(AUTHORS),
    publishedAt: `2024-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`,
    description: writeDescription(subject, dice),
  };
  if (address.kind === "short") return { ...meta, blocks: writeParagraphs(subject, SHORT_PAGE_WORDS, dice) };

  const words = dice.between(320, 880);
  const headings = sectionHeadings(subject, dice.between(2, 4), dice);
  const headingWords = headings.reduce((sum, h) => sum + countWords(h), 0);
  const perSection = Math.floor((words - headingWords) / (headings.length + 1));
  const blocks = writeParagraphs(subject, perSection, dice);
  headings.forEach((heading) => blocks.push(`## ${heading}`, ...writeParagraphs(subject, perSection, dice)));
  return { ...meta, blocks };
}

const escapeHtml = (text: string): string =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

export function renderPage(address: PageAddress, origin: string): string {
  const article = pageArticle(address);
  const topicSlug = address.slug.replace(/--.*$/, "");
  const related = [1, 2, 3]
    .map((n) => ((address.number + n - 1) % 6) + 1)
    .map((n) => `<li><a href="/pages/${pageSlug(topicSlug, "guide", n)}">${escapeHtml(TITLES[(n - 1) % TITLES.length].replace("{T}", titleCase(address.topic)))}</a></li>`)
    .join("");
  const body = article.blocks
    .map((block) => (block.startsWith("## ") ? `<h2>${escapeHtml(block.slice(3))}</h2>` : `<p>${escapeHtml(block)}</p>`))
    .join("\n      ");
  const date = new Date(`${article.publishedAt}T08:00:00Z`).toLocaleDateString("en-US", { year: "numeric", month: "long", day: "numeric", timeZone: "UTC" });
  const site = escapeHtml(article.site);
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${escapeHtml(article.title)} | ${site}</title>
  <meta name="description" content="${escapeHtml(article.description)}">
  <meta name="author" content="${escapeHtml(article.author)}">
  <meta property="og:type" content="article">
  <meta property="og:title" content="${escapeHtml(article.title)}">
  <meta property="og:site_name" content="${site}">
  <meta property="article:published_time" content="${article.publishedAt}T08:00:00Z">
  <link rel="canonical" href="${origin}/pages/${address.canonicalSlug}">
</head>
<body>
  <div class="cookie-banner" id="cookie-consent" role="dialog" aria-label="Cookie consent">
    <p>We use cookies to improve your experience, measure traffic and show personalised ads. By continuing to browse you agree to our use of cookies.</p>
    <button type="button">Accept all</button> <button type="button">Manage preferences</button>
  </div>
  <header class="site-header">
    <a class="logo" href="/pages/${pageSlug(topicSlug, "guide", 1)}">${site}</a>
    <nav class="main-nav"><ul><li><a href="#">Home</a></li><li><a href="#">News</a></li><li><a href="#">Reviews</a></li><li><a href="#">Guides</a></li><li><a href="#">Newsletter</a></li><li><a href="#">Contact</a></li></ul></nav>
  </header>
  <div class="ad ad-leaderboard" aria-label="Advertisement"><span>Advertisement</span> <a href="#" rel="sponsored">Limited offer: save 20% on premium membership this week only</a></div>
  <main class="layout">
    <article class="post">
      <h1>${escapeHtml(article.title)}</h1>
      <p class="byline">By <span class="author">${escapeHtml(article.author)}</span> · <time datetime="${article.publishedAt}">${date}</time></p>
      ${body}
    </article>
    <aside class="sidebar">
      <section class="ad ad-sidebar"><span>Sponsored</span><p>Upgrade your setup with our partner deals. Free shipping on orders over $50.</p></section>
      <section class="related"><h3>Related articles</h3><ul>${related}</ul></section>
      <section class="newsletter"><h3>Get our newsletter</h3><p>The best stories, once a week. No spam.</p><form><input type="email" name="email"><button type="submit">Sign up</button></form></section>
    </aside>
  </main>
  <footer class="site-footer">
    <nav><a href="#">About</a> · <a href="#">Privacy policy</a> · <a href="#">Terms of use</a> · <a href="#">Cookie settings</a></nav>
    <p>© 2024 ${site}. All rights reserved.</p>
  </footer>
</body>
</html>
`;
}
