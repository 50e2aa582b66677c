// The documentation a newcomer reads: README.md and docs/*.md. Every relative link leads somewhere
// (the file, and the heading when the link names one, anchored the way GitHub renders it), and the
// README stays short, opening with the two commands that start the system and run the tests.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");
const README_MAX_LINES = 250;

const PAGES = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((name) => name.endsWith(".md")).sort().map((name) => `docs/${name}`)];

/** GitHub's anchor for a heading: lower case, punctuation dropped, each space a dash. */
function githubSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // a link in a heading anchors on its text
    .replace(/<[^>]+>/g, "")
    .trim()
    .toLowerCase();
  // Letters, marks, digits, connector punctuation (`_`), spaces and dashes stay; the rest goes.
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "").replace(/ /g, "-");
}

/** The page's lines outside fenced code blocks, with their line numbers. */
function proseLines(markdown: string): { line: string; number: number }[] {
  const lines = markdown.split("\n");
  const prose: { line: string; number: number }[] = [];
  let fence: string | undefined;
  lines.forEach((line, i) => {
    const opener = line.match(/^ {0,3}(`{3,}|~{3,})/)?.[1];
    if (fence) {
      if (opener && opener[0] === fence[0] && opener.length >= fence.length && line.trim() === opener) fence = undefined;
      return;
    }
    if (opener) {
      fence = opener;
      return;
    }
    prose.push({ line, number: i + 1 });
  });
  return prose;
}

/** Every anchor a page offers: its ATX headings as GitHub numbers repeats, and explicit HTML anchors. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { line } of proseLines(markdown)) {
    const heading = line.match(/^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/)?.[1];
    if (heading !== undefined) {
      const slug = githubSlug(heading);
      const repeats = seen.get(slug) ?? 0;
      seen.set(slug, repeats + 1);
      anchors.add(repeats ? `${slug}-${repeats}` : slug);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]!);
  }
  return anchors;
}

interface Link {
  page: string;
  line: number;
  target: string;
}

/** Inline links and images, and reference definitions, outside code; external ones left out. */
function relativeLinks(page: string): Link[] {
  const links: Link[] = [];
  for (const { line, number } of proseLines(readFileSync(join(ROOT, page), "utf8"))) {
    const text = line.replace(/(`+)[^`]*?\1/g, ""); // a code span shows link syntax, it is not a link
    const targets = [
      ...[...text.matchAll(/!?\[(?:[^[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!),
      ...[...text.matchAll(/^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)/g)].map((m) => m[1]!),
    ];
    for (const raw of targets) {
      const target = raw.replace(/^<|>$/g, "");
      if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) continue;
      links.push({ page, line: number, target });
    }
  }
  return links;
}

/** Why a link is broken, or undefined when it leads somewhere. */
function brokenReason({ page, target }: Link): string | undefined {
  const hash = target.indexOf("#");
  const path = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
  const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
  const file = path ? resolve(dirname(join(ROOT, page)), path) : join(ROOT, page);
  if (relative(ROOT, file).startsWith("..")) return "leads outside the repository";
  if (!existsSync(file)) return "no such file";
  if (anchor === undefined) return undefined;
  if (statSync(file).isDirectory()) return "an anchor on a directory";
  if (file.endsWith(".md")) return anchorsOf(readFileSync(file, "utf8")).has(anchor) ? undefined : `no heading with anchor #${anchor}`;
  // Any other file: GitHub's line anchors (#L12, #L12-L20).
  const lines = readFileSync(file, "utf8").split("\n").length;
  const range = anchor.match(/^L(\d+)(?:-L(\d+))?$/);
  if (!range) return `#${anchor} is not a line anchor`;
  return [range[1], range[2]].every((n) => n === undefined || Number(n) <= lines) ? undefined : `past the file's ${lines} lines`;
}

describe("the GitHub anchor of a heading", () => {
  test("is lower case, without punctuation, spaces turned to dashes", () => {
    expect(githubSlug("Real providers: pacing, fair shares and outages")).toBe("real-providers-pacing-fair-shares-and-outages");
    expect(githubSlug("The services' own contracts")).toBe("the-services-own-contracts");
    expect(githubSlug("GET /v1/articles/{id}/steps")).toBe("get-v1articlesidsteps");
    expect(githubSlug("`npm run bench` and its P1-P8 figures")).toBe("npm-run-bench-and-its-p1-p8-figures");
    expect(githubSlug("Links [in](docs/api.md) headings, under_scores kept")).toBe("links-in-headings-under_scores-kept");
  });

  test("repeats of a heading are numbered, and code blocks hold no headings", () => {
    const anchors = anchorsOf("# Notes\n\n## Notes\n\n```sh\n# not a heading\n```\n\n### Notes\n");
    expect([...anchors].sort()).toEqual(["notes", "notes-1", "notes-2"]);
  });
});

describe("README.md and docs/*.md", () => {
  test("every relative link leads to a file in the repository, and to a heading of it when it names one", () => {
    const links = PAGES.flatMap(relativeLinks);
    expect(links.length).toBeGreaterThan(PAGES.length);
    const broken = links.flatMap((link) => {
      const reason = brokenReason(link);
      return reason ? [`${link.page}:${link.line}: ${link.target}: ${reason}`] : [];
    });
    expect(broken).toEqual([]);
  });

  test("every page under docs/ is reached from the README or from a page it reaches", () => {
    const reached = new Set(["README.md"]);
    const queue = ["README.md"];
    while (queue.length) {
      for (const link of relativeLinks(queue.shift()!)) {
        const path = link.target.split("#")[0]!;
        const file = relative(ROOT, path ? resolve(dirname(join(ROOT, link.page)), decodeURIComponent(path)) : join(ROOT, link.page));
        if (PAGES.includes(file) && !reached.has(file)) {
          reached.add(file);
          queue.push(file);
        }
      }
    }
    expect(PAGES.filter((page) => !reached.has(page))).toEqual([]);
  });

  test(`README.md has at most ${README_MAX_LINES} lines`, () => {
    const text = readFileSync(join(ROOT, "README.md"), "utf8");
    const lines = text.endsWith("\n") ? text.split("\n").length - 1 : text.split("\n").length;
    expect(lines).toBeLessThanOrEqual(README_MAX_LINES);
  });

  test("README.md opens with the two commands: the whole system, then the whole test suite", () => {
    const text = readFileSync(join(ROOT, "README.md"), "utf8");
    const firstBlock = text.match(/```sh\n([\s\S]*?)```/)?.[1] ?? "";
    const commands = firstBlock.split("\n").filter(Boolean).map((line) => line.replace(/\s+#.*$/, ""));
    expect(commands).toEqual(["npm install && npm start", "npm install && npm test && npm run test:fleet"]);
  });
});
