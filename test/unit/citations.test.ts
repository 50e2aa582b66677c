// Resolving an article's citations against the sources its research read (kit/src/rules/citations.ts), and
// what a source may carry (research.ts citableUrl, citations.ts plainText).
import { describe, expect, test } from "bun:test";
import { plainText, resolveCitations, sourcesSection } from "../../services/kit/src/rules/citations.ts";
import { countWords } from "../../services/kit/src/words.ts";
import { citableUrl } from "../../services/generation-runner/src/research/research.ts";
import { citedText } from "../../services/generation-runner/src/domain/cited-writing.ts";

const sources = [
  { number: 1, url: "https://news.example.com/a", title: "Solar farm approved", siteName: "News" },
  { number: 2, url: "https://brew.example.com/b(2)", title: "A *bold* [claim]", siteName: "Brew <Site>" },
];

describe("resolveCitations", () => {
  test("none returns the text as written, byte for byte", () => {
    const text = "Figures [1] and [9]. [x][1]\n";
    expect(resolveCitations(text, sources, "none")).toEqual({ content: text, readText: text, cited: [], removed: 0 });
  });

  test("inline links each known number to its page, drops unknown ones with their space, and counts them", () => {
    const { content, cited, removed } = resolveCitations("One [1]. Two [2][7]. Three [9]. Both [1, 8].\n", sources, "inline");
    expect(content).toBe(
      "One [\\[1\\]](https://news.example.com/a). Two [\\[2\\]](https://brew.example.com/b%282%29). Three. Both [\\[1\\]](https://news.example.com/a).\n",
    );
    expect(cited).toEqual([1, 2]);
    expect(removed).toBe(3);
  });

  test("list keeps the markers and appends every source read, titles as text", () => {
    const { content, cited, removed } = resolveCitations("# T\n\nOnly the first [1].\n", sources, "list");
    expect(content).toBe(`# T\n\nOnly the first [1].\n\n${sourcesSection(sources)}`);
    expect(sourcesSection(sources)).toBe(
      "## Sources\n\n1. [Solar farm approved](https://news.example.com/a) — News\n2. [A \\*bold\\* \\[claim\\]](https://brew.example.com/b%282%29) — Brew \\<Site\\>\n",
    );
    expect(cited).toEqual([1]);
    expect(removed).toBe(0);
  });

  test("links, images, reference labels and code are not citations", () => {
    const text = "See [1](https://x.example) and ![2](i.png), [ref][1], arr\\[1\\].\n\n```\nxs[2]\n```\n";
    expect(resolveCitations(text, sources, "inline")).toEqual({ content: text, readText: text, cited: [], removed: 0 });
  });
});

describe("the words of a cited article", () => {
  const written = "# Beans\n\nRoasting darkens beans [1]. Grinding [2][7] matters. A guess [9].\n";
  // The same article as a reader reads it: markers plain, unknown ones gone, no Sources section.
  const read = "# Beans\n\nRoasting darkens beans [1]. Grinding [2] matters. A guess.\n";
  const research = {
    query: "beans",
    questions: [],
    sources: sources.map((s) => ({ index: s.number, url: s.url, title: s.title, siteName: s.siteName, text: "page", wordCount: 1, fetchedAt: "2026-01-01T00:00:00.000Z" })),
  };

  test("readText is the text a reader reads: plain markers, no link addresses, no Sources section", () => {
    expect(resolveCitations(written, sources, "inline").readText).toBe(read);
    expect(resolveCitations(written, sources, "list").readText).toBe(read);
  });

  test("are those of the text without its Sources section and link addresses; citations none counts the text as written", () => {
    for (const style of ["inline", "list"] as const) {
      const cited = citedText(written, style, research as any);
      expect(cited.content).not.toBe(read);
      expect(cited.words).toBe(countWords(read));
    }
    // Counted on the stored text, the Sources section's titles, site names and numbers would cost words.
    expect(countWords(citedText(written, "list", research as any).content)).toBe(countWords(read) + countWords(sourcesSection(sources)));
    expect(citedText(written, "none", research as any).words).toBe(countWords(written));
    // In a JSON envelope, the article's content alone is counted, as for any article.
    const envelope = JSON.stringify({ article: { title: "Beans", content: written } });
    expect(citedText(envelope, "list", research as any).words).toBe(countWords(read));
  });
});

describe("what a source carries", () => {
  test("a citable URL has no credentials or fragment, and nothing added", () => {
    expect(citableUrl("https://user:pw@example.com/a?utm_source=x#top")).toBe("https://example.com/a?utm_source=x");
    expect(citableUrl("https://example.com/a?b=1")).toBe("https://example.com/a?b=1");
    expect(citableUrl("https://example.com")).toBe("https://example.com");
  });

  test("titles and site names are plain text", () => {
    expect(plainText(' <b>Best</b> grinders\n<script>alert("x")</script> 2024 ')).toBe('Best grinders alert("x") 2024');
    expect(plainText("a < b > c")).toBe("a b c");
    expect(plainText("x".repeat(400)).length).toBe(300);
  });
});
