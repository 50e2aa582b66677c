// Turns a fetched HTML page into the readable article text research feeds to prompts.
// Readability finds the article; a pre-pass removes page furniture it sometimes keeps (cookie
// banners, ad slots, share bars), and a block walk keeps paragraph breaks that textContent loses.
import { Readability } from "@mozilla/readability";
import { parseHTML } from "linkedom";

export interface ExtractedPage {
  title: string;
  /** Paragraphs separated by one blank line, whitespace collapsed inside each. */
  text: string;
  /** Absolute http(s) URL from <link rel="canonical">, or null. */
  canonicalUrl: string | null;
  /** The site's name from its metadata (og:site_name), when it gives one. */
  siteName?: string;
}

// Never article text, wherever it sits.
const NON_TEXT_SELECTOR = "script, style, noscript, template, iframe, svg, canvas, button, dialog";

// Usually page furniture, but some sites wrap everything in one of these (ASP.NET's page-wide
// <form>, a body-level [role=main] mistake), so each is removed only when it does not wrap the article.
const FURNITURE_SELECTOR = [
  "form", "nav", "aside", "footer",
  "[role=navigation]", "[role=banner]", "[role=complementary]", "[role=contentinfo]", "[role=dialog]",
  "[aria-hidden=true]", "[hidden]",
].join(", ");

// A class or id made of these words (e.g. "cookie-banner", "ad-slot", "comments_area") marks furniture.
const FURNITURE_WORDS = new Set([
  "cookie", "cookies", "consent", "gdpr", "ad", "ads", "advert", "advertisement", "adsense", "sponsored",
  "promo", "newsletter", "subscribe", "share", "sharing", "social", "comment", "comments", "related",
  "sidebar", "popup", "modal", "paywall", "breadcrumb", "breadcrumbs", "banner", "outbrain", "taboola",
]);

const BLOCK_TAGS = new Set([
  "ADDRESS", "ARTICLE", "ASIDE", "BLOCKQUOTE", "DD", "DIV", "DL", "DT", "FIGCAPTION", "FIGURE", "FOOTER",
  "H1", "H2", "H3", "H4", "H5", "H6", "HEADER", "HR", "LI", "MAIN", "OL", "P", "PRE", "SECTION", "TABLE",
  "TBODY", "THEAD", "TR", "UL", "BR",
]);

type El = Element;

function looksLikeFurniture(el: El): boolean {
  const names = `${el.getAttribute("class") ?? ""} ${el.getAttribute("id") ?? ""}`.toLowerCase();
  if (!names.trim()) return false;
  return names.split(/\s+/).some((name) => name.split(/[-_]/).some((part) => FURNITURE_WORDS.has(part)));
}

/** Never remove what probably wraps the article itself ("has-sidebar" on a layout wrapper). */
function wrapsContent(el: El, totalParagraphs: number): boolean {
  const tag = el.tagName;
  if (tag === "HTML" || tag === "BODY" || tag === "MAIN" || tag === "ARTICLE") return true;
  if (el.querySelector("article, main")) return true;
  const inside = el.querySelectorAll("p").length;
  return totalParagraphs >= 3 && inside * 2 >= totalParagraphs;
}

function removeFurniture(document: Document): void {
  for (const el of Array.from(document.querySelectorAll(NON_TEXT_SELECTOR))) el.remove();
  const total = document.querySelectorAll("p").length;
  for (const el of Array.from(document.querySelectorAll(FURNITURE_SELECTOR))) {
    if (el.isConnected && !wrapsContent(el, total)) el.remove();
  }
  // Site headers (logo, menu); an article's own <header> holds its title and byline.
  for (const el of Array.from(document.querySelectorAll("header"))) {
    if (el.isConnected && !el.closest("article, main") && !wrapsContent(el, total)) el.remove();
  }
  for (const el of Array.from(document.querySelectorAll("[class], [id]"))) {
    if (el.isConnected && looksLikeFurniture(el) && !wrapsContent(el, total)) el.remove();
  }
}

function canonicalOf(document: Document, pageUrl: string): string | null {
  for (const link of Array.from(document.querySelectorAll("link[rel][href]"))) {
    const rel = (link.getAttribute("rel") ?? "").toLowerCase().split(/\s+/);
    if (!rel.includes("canonical")) continue;
    try {
      const resolved = new URL(link.getAttribute("href")!, pageUrl);
      if (resolved.protocol === "http:" || resolved.protocol === "https:") return resolved.href;
    } catch {
      // An unusable canonical is the same as none.
    }
  }
  return null;
}

/** Collects text block by block so paragraphs, headings and list items stay separate. */
function textBlocks(root: Node): string[] {
  const blocks: string[] = [];
  let current = "";
  const flush = () => {
    const block = current.replace(/\s+/g, " ").trim();
    if (block) blocks.push(block);
    current = "";
  };
  const walk = (node: Node) => {
    if (node.nodeType === 3) {
      current += node.textContent ?? "";
      return;
    }
    if (node.nodeType !== 1) return;
    const tag = (node as El).tagName;
    if (tag === "SCRIPT" || tag === "STYLE" || tag === "NOSCRIPT") return;
    const isBlock = BLOCK_TAGS.has(tag);
    if (isBlock) flush();
    if (tag === "LI") current += "- ";
    if (tag === "TD" || tag === "TH") current += " ";
    for (const child of Array.from(node.childNodes)) walk(child);
    if (isBlock) flush();
  };
  walk(root);
  flush();
  return blocks.filter((block) => block !== "-");
}

export function extractMainText(html: string, url: string): ExtractedPage {
  const { document } = parseHTML(html);
  const canonicalUrl = canonicalOf(document, url);
  const pageTitle = (document.querySelector("title")?.textContent ?? "").replace(/\s+/g, " ").trim();

  removeFurniture(document);
  const article = new Readability(document).parse();
  if (!article?.content) return { title: pageTitle, text: "", canonicalUrl };
  const siteName = (article.siteName ?? "").replace(/\s+/g, " ").trim() || undefined;

  const { document: content } = parseHTML(`<!doctype html><html><body>${article.content}</body></html>`);
  const text = textBlocks(content.body).join("\n\n");
  const title = (article.title ?? "").replace(/\s+/g, " ").trim() || pageTitle;
  return { title, text, canonicalUrl, siteName };
}
