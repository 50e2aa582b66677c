// The brief checks on a finished text: each check passing on a text that meets the brief and
// failing, with the value measured, on one that misses it; readability by its language's formula.
import { describe, expect, test } from "bun:test";
import { checkBrief, headingsOf, occurrencesOf, type Brief, type DeliveredText } from "../../services/generation-runner/src/domain/brief-checks.ts";
import type { BriefCheck } from "../../services/kit/src/rules/quality-report.ts";
import { readabilityOf, syllablesOf } from "../../services/generation-runner/src/domain/readability.ts";
import { countWords } from "../../services/kit/src/words.ts";

const brief: Brief = {
  title: "How to Choose an Espresso Grinder",
  targetWordCount: 300,
  targetKeyword: "espresso grinder",
  keywords: ["burr", "grind size"],
  includeFaq: true,
  language: "en",
  citations: "none",
};

const filler = (n: number) =>
  Array.from({ length: n }, (_, i) => `A good cup starts with fresh beans and a steady hand, and step ${i + 1} is to taste as you go.`).join(" ");

const goodBody = `# How to Choose an Espresso Grinder

An espresso grinder shapes every shot you pull at home. Pick one with flat or conical burr sets and a fine grind size dial. ${filler(3)}

## What an espresso grinder does

${filler(4)} The espresso grinder matters more than the machine.

### Burr shapes

${filler(3)}

## Setting the grind size

${filler(3)} Keep the espresso grinder clean.

## FAQ

### Is a hand grinder enough?

${filler(2)}
`;

const delivered = (body: string, over: Partial<DeliveredText> = {}): DeliveredText => ({
  body,
  words: countWords(body),
  metaTitle: "How to Choose an Espresso Grinder",
  metaDescription: "A practical guide to picking an espresso grinder for home: burr types, grind size control, speed, noise and what to spend for a better shot.",
  cited: [],
  citationsRemoved: 0,
  ...over,
});

const byName = (checks: BriefCheck[]) => Object.fromEntries(checks.map((c) => [c.name, c]));
const run = (body: string, over: Partial<DeliveredText> = {}, b: Partial<Brief> = {}) => byName(checkBrief({ ...brief, ...b }, delivered(body, over)).checks);

describe("brief checks", () => {
  test("a text that meets its brief passes every check, and no repair is listed", () => {
    const body = goodBody;
    const report = checkBrief({ ...brief, targetWordCount: countWords(body) }, delivered(body));
    const failed = report.checks.filter((c) => c.status === "failed");
    expect(failed).toEqual([]);
    expect(report.repairs).toEqual([]);
    expect(byName(report.checks).faq_section!.status).toBe("passed");
    expect(byName(report.checks).citations_resolved!.status).toBe("not_measured");
  });

  test("length: words against the target's tolerance", () => {
    const words = countWords(goodBody);
    expect(words).toBeGreaterThan(300);
    const tolerance = Math.round(words / 10);
    expect(run(goodBody, {}, { targetWordCount: words }).length).toEqual({ name: "length", status: "passed", value: words, target: `${words - tolerance}–${words + tolerance} words` });
    expect(run(goodBody, {}, { targetWordCount: 1000 }).length).toEqual({ name: "length", status: "failed", value: words, target: "900–1100 words" });
  });

  test("target keyword in the title, H1, first 100 words, an H2 and the meta description", () => {
    const checks = run(goodBody);
    for (const name of ["keyword_in_title", "keyword_in_h1", "keyword_in_introduction", "keyword_in_h2", "keyword_in_meta_description"]) expect(checks[name]!.status).toBe("passed");
    const missing = run(`# Choosing Well\n\n${filler(12)} An espresso grinder at last.\n\n## Beans\n\n${filler(2)}\n`, { metaDescription: null }, { title: "Choosing Well" });
    for (const name of ["keyword_in_title", "keyword_in_h1", "keyword_in_introduction", "keyword_in_h2", "keyword_in_meta_description"]) {
      expect(missing[name]).toMatchObject({ status: "failed", value: false });
    }
    expect(run(goodBody, {}, { targetKeyword: undefined }).keyword_in_h1).toEqual({ name: "keyword_in_h1", status: "not_measured", value: null, target: "no target_keyword asked" });
  });

  test("keyword density between 0.5% and 2.5% of words", () => {
    expect(run(goodBody).keyword_density!.status).toBe("passed");
    const stuffed = `# Espresso grinder\n\n${"espresso grinder ".repeat(20)}is all this says.\n`;
    expect(run(stuffed).keyword_density).toMatchObject({ status: "failed", target: "0.5–2.5% of words" });
    expect(run(stuffed).keyword_density!.value as number).toBeGreaterThan(2.5);
    const sparse = `# Grinders\n\n${filler(20)} One espresso grinder.\n`;
    expect(run(sparse).keyword_density!.value as number).toBeLessThan(0.5);
  });

  test("keywords: each present at least once, the missing ones named", () => {
    expect(run(goodBody).keywords_present).toMatchObject({ status: "passed", value: [] });
    expect(run(goodBody, {}, { keywords: ["burr", "tamper"] }).keywords_present).toMatchObject({ status: "failed", value: ["tamper"] });
    expect(run(goodBody, {}, { keywords: [] }).keywords_present!.status).toBe("not_measured");
  });

  test("one H1 and no skipped heading level", () => {
    expect(run(goodBody).single_h1).toMatchObject({ status: "passed", value: 1 });
    expect(run(`${goodBody}\n# Another title\n`).single_h1).toMatchObject({ status: "failed", value: 2 });
    expect(run(`## Only a section\n\n${filler(2)}\n`).single_h1).toMatchObject({ status: "failed", value: 0 });
    expect(run(goodBody).heading_levels).toMatchObject({ status: "passed", value: [] });
    expect(run(`# Title\n\n## Part\n\n#### Deep\n\ntext.\n`).heading_levels).toMatchObject({ status: "failed", value: ["H2 to H4: Deep"] });
  });

  test("headings: markdown outside code fences, and HTML", () => {
    expect(headingsOf("# One\n```\n# not a heading\n```\n<h2>Two <em>b</em></h2>\n### Three ###")).toEqual([
      { level: 1, text: "One" },
      { level: 2, text: "Two b" },
      { level: 3, text: "Three" },
    ]);
  });

  test("FAQ section when include_faq", () => {
    expect(run(goodBody.replace("## FAQ", "## Frequently asked questions")).faq_section!.status).toBe("passed");
    expect(run(goodBody.replace("## FAQ", "## Final words")).faq_section).toMatchObject({ status: "failed", value: false });
    expect(run(goodBody, {}, { includeFaq: false }).faq_section!.status).toBe("not_measured");
  });

  test("meta title at most 60 and meta description 120 to 160 characters", () => {
    expect(run(goodBody).meta_title_length).toMatchObject({ status: "passed", value: 33 });
    expect(run(goodBody, { metaTitle: "x".repeat(61) }).meta_title_length).toMatchObject({ status: "failed", value: 61, target: "≤ 60 characters" });
    expect(run(goodBody).meta_description_length!.status).toBe("passed");
    expect(run(goodBody, { metaDescription: "Too short." }).meta_description_length).toMatchObject({ status: "failed", value: 10 });
    expect(run(goodBody, { metaDescription: "é".repeat(161) }).meta_description_length).toMatchObject({ status: "failed", value: 161 });
    expect(run(goodBody, { metaDescription: null }).meta_description_length).toMatchObject({ status: "failed", value: null });
  });

  test("language: the detector's guess against the language asked", () => {
    expect(run(goodBody).language).toEqual({ name: "language", status: "passed", value: "en", target: "en" });
    const german = `# Die richtige Kaffeemühle\n\nEine gute Kaffeemühle bestimmt jeden Espresso, den man zu Hause zubereitet. Das Mahlwerk sollte gleichmäßig arbeiten und sich fein einstellen lassen, damit der Kaffee nicht bitter wird.\n`;
    expect(run(german).language).toMatchObject({ status: "failed", value: "de", target: "en" });
    expect(run(german, {}, { language: "de" }).language!.status).toBe("passed");
  });

  test("readability: Flesch reading ease in English, Amstad in German, not measured elsewhere", () => {
    expect(run(goodBody).readability).toMatchObject({ status: "passed", target: "Flesch reading ease ≥ 50" });
    const dense = `# Considerations\n\n${"Comprehensive organizational considerations necessitate extraordinarily sophisticated methodological interventions regarding infrastructural modernization and institutional accountability mechanisms. ".repeat(3)}\n`;
    expect(run(dense).readability!.status).toBe("failed");
    expect(run(goodBody, {}, { language: "ja" }).readability).toEqual({ name: "readability", status: "not_measured", value: null, target: "no standard formula for ja" });
    expect(readabilityOf("Der Hund läuft. Die Katze schläft.", "de")!.formula).toBe("Flesch reading ease (Amstad)");
  });

  test("syllables by vowel groups", () => {
    expect(["the", "make", "table", "reading", "beautiful", "named"].map((w) => syllablesOf(w, "en"))).toEqual([1, 1, 2, 2, 3, 1]);
    expect(["Mühle", "Kaffee", "Freiheit"].map((w) => syllablesOf(w, "de"))).toEqual([2, 2, 2]);
  });

  test("syllables: the one-pass count agrees with the vowel-group expressions it replaced, on every word of a generated set", () => {
    // The formula as regular expressions, the way it reads in the style guides.
    const byExpressions = (word: string, language: "en" | "de") => {
      const w = word.toLowerCase().replace(/[^a-zäöüß]/g, "");
      if (w === "") return 0;
      if (language === "de") return Math.max(1, w.match(/[aeiouyäöü]+/g)?.length ?? 0);
      if (w.length <= 3) return 1;
      const trimmed = w.replace(/(?:[^laeiouy]es|[^laeiouy]ed|[^laeiouy]e)$/, (end) => end[0]!).replace(/^y/, "");
      return Math.max(1, trimmed.match(/[aeiouy]+/g)?.length ?? 0);
    };
    // Every word of up to four letters over an alphabet holding each case the rules tell apart, and longer ones from a fixed seed.
    const alphabet = ["a", "e", "y", "ü", "ß", "l", "s", "d", "t", "E", "'", "-"];
    const words: string[] = [""];
    for (let length = 0; length < 4; length++) for (const w of [...words]) if (w.length === length) for (const c of alphabet) words.push(w + c);
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % alphabet.length;
    for (let i = 0; i < 5000; i++) words.push(Array.from({ length: 5 + (i % 6) }, () => alphabet[next()]).join(""));
    const differing = words.flatMap((w) => (["en", "de"] as const).filter((l) => syllablesOf(w, l) !== byExpressions(w, l)).map((l) => `${w} (${l})`));
    expect(words.length).toBeGreaterThan(20000);
    expect(differing).toEqual([]);
  });

  test("no placeholder or model talk, and a finished last sentence", () => {
    expect(run(goodBody).no_placeholder_text).toMatchObject({ status: "passed", value: [] });
    const talk = `${goodBody}\nAs an AI language model, I have no taste. Add [insert brand name] here. Lorem ipsum dolor.\n`;
    expect(run(talk).no_placeholder_text).toMatchObject({ status: "failed", value: ["As an AI language model, I have no taste", "[insert brand name]", "Lorem ipsum"] });
    expect(run(`${goodBody}\nSure, here is the article you asked for.\n`).no_placeholder_text!.value).toEqual(["Sure, here is the article you asked for."]);
    expect(run(goodBody).complete_ending).toMatchObject({ status: "passed", value: true });
    expect(run(`${goodBody}\nAnd then the grinder`).complete_ending).toMatchObject({ status: "failed", value: false });
  });

  test("no filler: stock phrases and paragraphs repeated to pad the count are caught", () => {
    expect(run(goodBody).no_filler).toMatchObject({ status: "passed", value: [] });
    const paragraph = "Grind fresh for every shot, because ground coffee goes stale within minutes and the shot shows it at once.";
    const padded = `${goodBody}\n${paragraph}\n\nIn conclusion, it is important to note that a grinder matters.\n\n${paragraph.toUpperCase()}\n`;
    const found = run(padded).no_filler!;
    expect(found.status).toBe("failed");
    expect(found.value).toEqual(["In conclusion", "it is important to note that", `repeated paragraph: ${paragraph.toUpperCase().slice(0, 57).trimEnd()}…`]);
    // A short line that recurs (a list item, a closing line) is not padding.
    expect(run(`${goodBody}\nKeep it simple.\n\nKeep it simple.\n`).no_filler!.status).toBe("passed");
  });

  test("citations, when asked, resolve", () => {
    expect(run(goodBody, { cited: [1, 2] }, { citations: "inline" }).citations_resolved).toMatchObject({ status: "passed", value: 2 });
    expect(run(goodBody, { cited: [1], citationsRemoved: 1 }, { citations: "list" }).citations_resolved!.status).toBe("failed");
    expect(run(goodBody, { cited: [] }, { citations: "inline" }).citations_resolved).toMatchObject({ status: "failed", value: 0 });
  });

  test("keyword occurrences: whole words, case and punctuation aside; anywhere in Japanese and Chinese", () => {
    expect(occurrencesOf("espresso grinder", "Espresso grinder, espresso-grinder; espresso grinders.", "en")).toBe(2);
    expect(occurrencesOf("a b", "a b a b", "en")).toBe(2);
    expect(occurrencesOf("コーヒー", "おいしいコーヒーの淹れ方とコーヒー豆", "ja")).toBe(2);
  });
});
