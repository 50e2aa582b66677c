// The H2 sections a section revision names and replaces (services/kit/src/rules/article-sections.ts):
// headings inside fenced code are not sections, a section is found by index or heading, a splice
// changes nothing outside the section's text, and a model's rewrite never adds a section.
import { describe, expect, test } from "bun:test";
import { articleSections, findSection, revisedSectionText, sectionText, sectionWords, spliceSection } from "../../services/kit/src/rules/article-sections.ts";

const BODY = "# Title\n\nIntro.\n\n## One\n\nFirst text.\n\n## Two ##\n\nSecond text here.\n\n```\n## not a section\n```\n\n## Three\n\nThird.\n";

describe("article sections", () => {
  test("every H2 outside fenced code, in order, each up to the next", () => {
    const sections = articleSections(BODY);
    expect(sections.map((s) => [s.index, s.heading])).toEqual([
      [1, "One"],
      [2, "Two"],
      [3, "Three"],
    ]);
    expect(sectionText(BODY, sections[1]!)).toBe("\nSecond text here.\n\n```\n## not a section\n```\n\n");
    expect(sectionWords(BODY, sections[0]!)).toBe(2);
    expect(articleSections("# Only a title\n\nText.")).toEqual([]);
  });

  test("named by index (number or digits) or heading, case and spacing aside", () => {
    const sections = articleSections(BODY);
    expect([findSection(sections, 2), findSection(sections, "3"), findSection(sections, "  two "), findSection(sections, "Four"), findSection(sections, 9)].map((s) => s?.heading)).toEqual(["Two", "Three", "Two", undefined, undefined]);
  });

  test("a splice changes only the section's text (and its heading when given), every other byte as it was", () => {
    const two = findSection(articleSections(BODY), 2)!;
    const spliced = spliceSection(BODY, two, "  New words.  ");
    expect(spliced).toBe("# Title\n\nIntro.\n\n## One\n\nFirst text.\n\n## Two ##\n\nNew words.\n\n## Three\n\nThird.\n");
    const last = findSection(articleSections(BODY), 3)!;
    expect(spliceSection(BODY, last, "Letzter.", "Drei")).toBe(`${BODY.slice(0, last.start)}## Drei\n\nLetzter.\n`);
  });

  test("a model's rewrite loses the heading it repeated, and its own H1 and H2 go down to H3", () => {
    expect(revisedSectionText("```markdown\n## Zwei\n\nHallo.\n\n## Inner\n\n# Top\n\nText.\n```")).toEqual({ heading: "Zwei", text: "Hallo.\n\n### Inner\n\n### Top\n\nText." });
    expect(revisedSectionText("Just text.")).toEqual({ text: "Just text.", heading: undefined });
  });
});
