// Where an article's images go and at what size they are asked for: the featured image after the
// introduction, the others between top-level sections (then between paragraphs), the same places
// in every version; each aspect ratio mapped to the nearest size the image model accepts.
import { describe, expect, test } from "bun:test";
import { imageSlots, placeImages, withImages } from "../../services/generation-runner/src/domain/image-placement.ts";
import { imageSizeFor } from "../../services/generation-runner/src/domain/image-sizes.ts";
import { readImageFile } from "../../services/generation-runner/src/domain/image-files.ts";
import { bandedPng } from "../../services/model-simulator/src/images.ts";

const ARTICLE = [
  "# Brewing at home",
  "",
  "An introduction paragraph.",
  "",
  "## Beans",
  "",
  "Beans matter most.",
  "",
  "## Water",
  "",
  "Soft water works.",
  "",
  "## Grind",
  "",
  "Grind just before.",
  "",
  "## Final Thoughts",
  "",
  "Enjoy it.",
  "",
].join("\n");

const image = (position: number) => ({ position, url: `https://api.example.com/images/${String(position).repeat(32)}.png`, alt: `Alt ${position}` });
const imageLines = (markdown: string) => markdown.split("\n").filter((l) => l.startsWith("!["));

describe("image placement", () => {
  test("the featured image follows the introduction; the others sit between sections, spread out", () => {
    const placed = placeImages(ARTICLE, 3, [1, 2, 3].map(image));
    const lines = placed.split("\n");
    expect(lines.indexOf(`![Alt 1](${image(1).url})`)).toBe(lines.indexOf("An introduction paragraph.") + 2);
    expect(lines[lines.indexOf(`![Alt 1](${image(1).url})`) + 2]).toBe("## Beans");
    // Two images over the three boundaries between four sections: the first and the last.
    expect(lines[lines.indexOf(`![Alt 2](${image(2).url})`) + 2]).toBe("## Water");
    expect(lines[lines.indexOf(`![Alt 3](${image(3).url})`) + 2]).toBe("## Final Thoughts");
  });

  test("each image illustrates its slot: the title for the featured one, else the section it closes", () => {
    const slots = imageSlots(ARTICLE, 3, "Brewing at home");
    expect(slots.map((s) => s.subject)).toEqual(["Brewing at home", "Beans", "Grind"]);
    expect(slots[1]!.context).toBe("Beans matter most.");
  });

  test("two images of one section get alt texts of their own", () => {
    const slots = imageSlots("# T\n\nIntro.\n\n## Only\n\nOne thing. More.\n\nTwo things.\n\nThree.\n", 4, "T");
    expect(slots.map((s) => s.alt)).toEqual(["T", "Only", "Only: Two things.", "Only: One thing."]);
  });

  test("more images than section boundaries go between paragraphs, then close the article", () => {
    const short = "# T\n\nIntro.\n\n## Only\n\nOne.\n\nTwo.\n";
    const placed = placeImages(short, 4, [1, 2, 3, 4].map(image));
    expect(imageLines(placed)).toHaveLength(4);
    expect(placed.indexOf("Alt 2")).toBeGreaterThan(placed.indexOf("One."));
    expect(placed.indexOf("Alt 2")).toBeLessThan(placed.indexOf("Two."));
    expect(placed.endsWith(`![Alt 4](${image(4).url})\n`)).toBe(true);
  });

  test("a left-out image leaves its place empty; no images leave the content as it was", () => {
    const placed = placeImages(ARTICLE, 3, [image(1), image(3)]);
    expect(imageLines(placed)).toEqual([`![Alt 1](${image(1).url})`, `![Alt 3](${image(3).url})`]);
    expect(placed.split("\n")[placed.split("\n").indexOf(`![Alt 3](${image(3).url})`) + 2]).toBe("## Final Thoughts");
    expect(withImages(ARTICLE, 3, [])).toBe(ARTICLE);
  });

  test("a JSON document without a body keeps its shape", () => {
    const document = JSON.stringify({ sections: ["a", "b"] });
    expect(withImages(document, 1, [image(1)])).toBe(document);
  });

  test("a JSON envelope gets its images in the body at article.content", () => {
    const envelope = JSON.stringify({ article: { content: ARTICLE, meta_title: "Brewing" } });
    const placed = JSON.parse(withImages(envelope, 2, [image(1), image(2)]));
    expect(placed.article.meta_title).toBe("Brewing");
    expect(imageLines(placed.article.content)).toHaveLength(2);
  });

  test("headings inside code fences are not sections; alt text cannot break the markdown", () => {
    const fenced = "# T\n\nIntro.\n\n```\n## not a section\n```\n\n## Real\n\nText.\n";
    const placed = placeImages(fenced, 1, [{ ...image(1), alt: "a [tricky] alt" }]);
    expect(placed).toContain(`![a tricky alt](${image(1).url})\n\n## Real`);
  });
});

describe("image sizes", () => {
  test.each([
    ["gpt-image-1", "1:1", "1024x1024"],
    ["gpt-image-1", "16:9", "1536x1024"],
    ["gpt-image-1", "4:3", "1536x1024"],
    ["gpt-image-1", "9:16", "1024x1536"],
    ["gpt-image-1", "3:4", "1024x1536"],
    ["dall-e-3", "16:9", "1792x1024"],
    ["dall-e-3", "3:4", "1024x1792"],
    ["dall-e-2", "16:9", "1024x1024"],
  ])("%s at %s asks for %s", (model, ratio, size) => {
    expect(imageSizeFor(model, ratio)).toBe(size);
  });

  test("the file's type and pixel size are read from its bytes", () => {
    expect(readImageFile(bandedPng(300, 200, [1, 2, 3], [4, 5, 6]))).toEqual({ mediaType: "image/png", extension: "png", width: 300, height: 200 });
    expect(readImageFile(new TextEncoder().encode("not an image at all, just some text"))).toBeUndefined();
  });
});
