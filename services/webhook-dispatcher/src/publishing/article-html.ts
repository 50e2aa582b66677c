// An article's body as the HTML of a WordPress post. The body is markdown (or a JSON envelope
// around it), rendered and sanitised exactly as the completion webhook renders it, then shaped for
// a post: the leading title heading goes (WordPress prints the post title itself), headings get
// anchors so a table of contents links work, the key takeaways and FAQ become sections of their
// own, and soft line breaks become spaces (WordPress's wpautop would turn them into <br>).
import { parseHTML } from "linkedom";
import { renderHtml, unwrapBody, type SizedImage } from "../domain/completion-payload.ts";
import { htmlText } from "./html-text.ts";

export interface ArticleHtml {
  /** The post's body. */
  html: string;
  /** The text of the leading level-1 heading that was taken out, if there was one. */
  heading?: string;
}

// The section headings the writing prompts ask for (services/kit/src/rules/prompt-template.ts).
const SECTIONS: { className: string; heading: RegExp }[] = [
  { className: "key-takeaways", heading: /^(key takeaways?|key points|takeaways|tl;?dr)\s*:?$/i },
  { className: "faq", heading: /^(faqs?|frequently asked questions|questions and answers)\s*:?$/i },
];

const HEADING = /^H[1-6]$/;
const levelOf = (element: Element) => Number(element.tagName[1]);

function fragment(html: string) {
  const { document } = parseHTML(`<!doctype html><html><head></head><body>${html}</body></html>`);
  return { document, body: document.body };
}

/**
 * The HTML of a node's children, with `<` and `>` escaped in attribute values as well as in text
 * (innerHTML leaves them raw in attributes, as HTML allows): an alt text holding "<script>" then
 * stands nowhere in the post as markup, for WordPress's filters, which read HTML with regular
 * expressions, or for anything else that does. The body is sanitised: no script or style content.
 */
function serialize(node: Node): string {
  let out = "";
  for (const child of node.childNodes) {
    if (child.nodeType === 3) out += htmlText(child.nodeValue ?? "");
    else if (child.nodeType === 8) out += `<!--${child.nodeValue}-->`;
    else if (child.nodeType === 1) {
      const element = child as Element;
      const tag = element.tagName.toLowerCase();
      const attributes = [...element.attributes].map((a) => ` ${a.name}="${htmlText(a.value).replace(/"/g, "&quot;")}"`).join("");
      out += VOID.has(element.tagName) ? `<${tag}${attributes}>` : `<${tag}${attributes}>${serialize(element)}</${tag}>`;
    }
  }
  return out;
}

/** A heading's anchor as GitHub spells it ("Why it works?" → "why-it-works"), told apart by a number when met again. */
function anchorOf(text: string, taken: Map<string, number>): string {
  const base = text.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").replace(/\s/g, "-") || "section";
  const seen = taken.get(base) ?? 0;
  taken.set(base, seen + 1);
  return seen === 0 ? base : `${base}-${seen}`;
}

/** Wraps a recognised section's heading and everything up to the next heading of its level or above. */
function wrapSections(document: Document, body: HTMLElement): void {
  for (const heading of [...body.children].filter((e) => HEADING.test(e.tagName))) {
    const section = SECTIONS.find((s) => s.heading.test(heading.textContent?.trim() ?? ""));
    if (!section || heading.parentElement !== body) continue;
    const wrapper = document.createElement("section");
    wrapper.setAttribute("class", section.className);
    body.insertBefore(wrapper, heading);
    let node: ChildNode | null = heading;
    while (node) {
      const next: ChildNode | null = node.nextSibling;
      if (node !== heading && node.nodeType === 1 && HEADING.test((node as Element).tagName) && levelOf(node as Element) <= levelOf(heading)) break;
      wrapper.appendChild(node);
      node = next;
    }
  }
}

/** Soft line breaks inside text become spaces; code keeps its lines. */
function joinSoftBreaks(node: Node): void {
  for (const child of [...node.childNodes]) {
    if (child.nodeType === 3) {
      const text = child.nodeValue ?? "";
      if (/\S/.test(text)) child.nodeValue = text.replace(/[ \t]*\n[ \t]*/g, " ");
    } else if (child.nodeType === 1 && !["PRE", "CODE"].includes((child as Element).tagName)) joinSoftBreaks(child);
  }
}

/**
 * The post HTML of an article's stored content (markdown, or a JSON envelope around it). The
 * article's images keep their URLs here; `withUploadedImages` points them at the site's copies.
 */
export function articleHtml(content: string, images: readonly SizedImage[] = []): ArticleHtml {
  const { document, body } = fragment(renderHtml(unwrapBody(content).markdown, images));
  let heading: string | undefined;
  const first = body.firstElementChild;
  if (first?.tagName === "H1") {
    heading = first.textContent?.trim() || undefined;
    first.remove();
  }
  const anchors = new Map<string, number>();
  for (const h of body.querySelectorAll("h2, h3, h4, h5, h6")) h.setAttribute("id", anchorOf(h.textContent ?? "", anchors));
  wrapSections(document, body);
  joinSoftBreaks(body);
  return { html: serialize(body).trim(), heading };
}

/** Where an image of the article now lives on the site. */
export interface UploadedImage {
  /** The media item's id. */
  id: number;
  /** The URL the site serves the image at. */
  sourceUrl: string;
}

/**
 * `html` with each image (and each link to an image) whose URL `uploaded` knows pointing at the
 * site's copy. The wp-image-<id> class is how WordPress recognises its own media in a post, to
 * add responsive sizes (srcset) when it renders the post.
 */
export function withUploadedImages(html: string, uploaded: ReadonlyMap<string, UploadedImage>): string {
  if (uploaded.size === 0) return html;
  const { body } = fragment(html);
  for (const img of body.querySelectorAll("img")) {
    const media = uploaded.get(img.getAttribute("src") ?? "");
    if (!media) continue;
    img.setAttribute("src", media.sourceUrl);
    const classes = (img.getAttribute("class") ?? "").split(/\s+/).filter((c: string) => c && !c.startsWith("wp-image-"));
    img.setAttribute("class", [...classes, `wp-image-${media.id}`].join(" "));
  }
  for (const a of body.querySelectorAll("a")) {
    const media = uploaded.get(a.getAttribute("href") ?? "");
    if (media) a.setAttribute("href", media.sourceUrl);
  }
  return serialize(body);
}

/**
 * `html` carrying a hidden comment (`<!-- text -->`) inside its first element: on a line of its
 * own, WordPress's wpautop would wrap it in an empty paragraph that shows as a gap in the post.
 */
export function withHiddenComment(html: string, text: string): string {
  const { document, body } = fragment(html);
  const comment = document.createComment(` ${text} `);
  const first = body.firstElementChild;
  if (!first) return `<!-- ${text} -->${html}`;
  if (VOID.has(first.tagName)) body.insertBefore(comment, first);
  else first.insertBefore(comment, first.firstChild);
  return serialize(body);
}

const VOID = new Set(["AREA", "BR", "COL", "EMBED", "HR", "IMG", "INPUT", "SOURCE", "TRACK", "WBR"]);
