// The brief checks: what the finished text is measured against once it is written and again after
// every change to it (the humanize pass). Each check says passed, failed or not_measured (the brief
// asked for nothing it could measure, or the text gives nothing to measure), the value measured and
// the target, so a client sees why an article falls short, not only that it does. Pure: the runner
// stores the report with the version it measured, and every reader of the article shows it.
import { detectAll } from "tinyld";
import type { CitationStyle } from "../../../kit/src/rules/citations.ts";
import { endsMidSentence, lengthTolerance } from "./length-control.ts";
import { fillerIn, placeholdersIn } from "./filler.ts";
import { proseOf, readabilityOf } from "./readability.ts";
import type { BriefCheck, QualityReport } from "../../../kit/src/rules/quality-report.ts";
import { truncateWords } from "../../../kit/src/words.ts";
import { plainlyWrittenIn } from "./language-signs.ts";

/** What the client asked for that the text can be measured against. */
export interface Brief {
  title: string;
  targetWordCount: number;
  targetKeyword?: string;
  keywords: readonly string[];
  includeFaq: boolean;
  language: string;
  citations: CitationStyle;
}

/** The text as it is delivered. */
export interface DeliveredText {
  /** The markdown a reader reads: a JSON envelope's article.content, without the images placed in it. */
  body: string;
  /** Its words as the quota counts them (the article's actual_word_count). */
  words: number;
  /** The meta title delivered with it (the envelope's meta_title, else the title). */
  metaTitle: string;
  /** The meta description delivered with it (the article's description), when there is one. */
  metaDescription: string | null;
  /** Source numbers the text cites, and citations of unknown numbers removed from it. */
  cited: readonly number[];
  citationsRemoved: number;
}

const check = (name: string, passed: boolean, value: BriefCheck["value"], target: string): BriefCheck => ({ name, status: passed ? "passed" : "failed", value, target });
const notMeasured = (name: string, target: string): BriefCheck => ({ name, status: "not_measured", value: null, target });

interface Heading {
  level: number;
  text: string;
}

/** A delivered body read once for every check that looks at it. */
interface ReadText {
  headings: Heading[];
  /** Its prose (`proseOf`): what the language, readability and introduction checks read. */
  prose: string;
  /** Its text made `normal`, where keywords are counted. */
  normalBody: string;
}

// Characters of prose the language detector reads: about 170 words name a language as surely as
// the whole text, and the detector's cost grows with what it reads (about 0.3 ms per 1,000
// characters on the runner's engine settings: a tenth of the runner's CPU per article at 3,000).
const LANGUAGE_SAMPLE = 1000;

/** The start of a text, up to about `max` characters, ending at a whitespace so no word is cut. */
function leadingText(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = text.lastIndexOf(" ", max);
  return text.slice(0, cut > 0 ? cut : max);
}

/** The markdown headings (ATX, outside code fences) and HTML h1–h6 of a text, in order. */
export function headingsOf(body: string): Heading[] {
  const headings: Heading[] = [];
  let fenced = false;
  for (const line of body.split("\n")) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    if (fenced) continue;
    const atx = /^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (atx) headings.push({ level: atx[1]!.length, text: atx[2]! });
    for (const html of line.matchAll(/<h([1-6])\b[^>]*>(.*?)<\/h\1>/gi)) headings.push({ level: Number(html[1]), text: html[2]!.replace(/<[^>]*>/g, "") });
  }
  return headings;
}

// Scripts written without spaces between words, where a keyword is found anywhere in a run of text.
const UNSPACED = new Set(["ja", "zh"]);
const normal = (text: string) => ` ${text.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim()} `;

/** Times the keyword occurs in the text, as whole words (case and punctuation aside). */
export function occurrencesOf(keyword: string, text: string, language: string): number {
  return occurrencesInNormal(keyword, normal(text), language);
}

// The same on a text already made `normal`: the checks count several keywords in one body, and
// normalising a long body once per keyword was a large part of the report's cost.
function occurrencesInNormal(keyword: string, haystack: string, language: string): number {
  const needle = UNSPACED.has(language) ? normal(keyword).trim() : normal(keyword);
  if (needle.trim() === "") return 0;
  let count = 0;
  // Consecutive whole-word matches share the space between them, so the search resumes on it.
  for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + Math.max(1, needle.length - 1))) count++;
  return count;
}

/** The first `max` words of a text's prose (the introduction a reader meets), counted as the article's words are. */
const openingWords = (prose: string, max: number): string => truncateWords(prose, max);

// Headings an FAQ section goes by in the service's languages.
const FAQ_HEADING = /\bfaqs?\b|frequently asked|preguntas frecuentes|questions fréquentes|foire aux questions|häufig gestellte fragen|häufige fragen|domande frequenti|perguntas frequentes|часто задаваемые вопросы|よくある質問|자주 묻는 질문|常见问题|常見問題/i;

const DENSITY = { min: 0.5, max: 2.5 };
const META_TITLE_MAX = 60;
const META_DESCRIPTION = { min: 120, max: 160 };
// Reads "fairly difficult" or easier on both formulas' scales: plain prose for a general reader.
const READABLE = 50;
const INTRODUCTION_WORDS = 100;

const characters = (text: string) => [...text].length;
const round2 = (n: number) => Math.round(n * 100) / 100;

function keywordChecks(brief: Brief, text: DeliveredText, read: ReadText): BriefCheck[] {
  const places = ["keyword_in_title", "keyword_in_h1", "keyword_in_introduction", "keyword_in_h2", "keyword_in_meta_description", "keyword_density"];
  const keyword = brief.targetKeyword?.trim();
  if (!keyword) return places.map((name) => notMeasured(name, "no target_keyword asked"));
  const found = (texts: string[]) => texts.some((t) => occurrencesOf(keyword, t, brief.language) > 0);
  // A place holds the keyword or not: the value is that yes or no.
  const presence = (name: string, texts: string[], target: string) => check(name, found(texts), found(texts), target);
  const headingTexts = (level: number) => read.headings.filter((h) => h.level === level).map((h) => h.text);
  const density = text.words > 0 ? round2((occurrencesInNormal(keyword, read.normalBody, brief.language) / text.words) * 100) : 0;
  return [
    presence("keyword_in_title", [brief.title], "present"),
    presence("keyword_in_h1", headingTexts(1), "present"),
    presence("keyword_in_introduction", [openingWords(read.prose, INTRODUCTION_WORDS)], `present in the first ${INTRODUCTION_WORDS} words`),
    presence("keyword_in_h2", headingTexts(2), "present in at least one H2"),
    presence("keyword_in_meta_description", text.metaDescription === null ? [] : [text.metaDescription], "present"),
    check("keyword_density", density >= DENSITY.min && density <= DENSITY.max, density, `${DENSITY.min}–${DENSITY.max}% of words`),
  ];
}

function headingChecks(headings: Heading[]): BriefCheck[] {
  const h1s = headings.filter((h) => h.level === 1).length;
  // A heading may go back up any number of levels, but down only one at a time (H2 to H4 skips H3);
  // the first one is judged by single_h1.
  const skips = headings.slice(1).flatMap((h, i) => (h.level > headings[i]!.level + 1 ? [`H${headings[i]!.level} to H${h.level}: ${h.text}`] : []));
  return [check("single_h1", h1s === 1, h1s, "1"), check("heading_levels", skips.length === 0, skips, "no skipped level")];
}

function languageCheck(brief: Brief, prose: string): BriefCheck {
  const target = brief.language;
  const sample = leadingText(prose, LANGUAGE_SAMPLE);
  // Prose plainly in the language asked needs no detector (language-signs.ts: where it says so, the detector agrees).
  if (plainlyWrittenIn(sample, target)) return check("language", true, target, target);
  // The detector's best guess over the opening prose; too little prose gives no guess.
  const guess = detectAll(sample)[0];
  if (!guess) return notMeasured("language", target);
  return check("language", guess.lang === target, guess.lang, target);
}

function readabilityCheck(brief: Brief, prose: string): BriefCheck {
  const readability = readabilityOf(prose, brief.language);
  if (!readability) return notMeasured("readability", `no standard formula for ${brief.language}`);
  return check("readability", readability.score >= READABLE, readability.score, `${readability.formula} ≥ ${READABLE}`);
}

function citationCheck(brief: Brief, text: DeliveredText): BriefCheck {
  if (brief.citations === "none") return notMeasured("citations_resolved", "no citations asked");
  // Every citation left in the text resolves to a source (unknown numbers were removed and counted).
  const passed = text.cited.length > 0 && text.citationsRemoved === 0;
  return check("citations_resolved", passed, text.cited.length, "at least one source cited, no unknown number removed");
}

/** The report on a delivered text against its brief; repairs is empty until the service makes any. */
export function checkBrief(brief: Brief, text: DeliveredText): QualityReport {
  const read: ReadText = { headings: headingsOf(text.body), prose: proseOf(text.body), normalBody: normal(text.body) };
  const headings = read.headings;
  const tolerance = Math.round(lengthTolerance(brief.targetWordCount));
  const lengthRange = { min: brief.targetWordCount - tolerance, max: brief.targetWordCount + tolerance };
  const placeholders = placeholdersIn(text.body);
  const filler = fillerIn(text.body);
  const hasFaq = headings.some((h) => FAQ_HEADING.test(h.text));
  const titleLength = characters(text.metaTitle);
  const descriptionLength = text.metaDescription === null ? null : characters(text.metaDescription);
  const missingKeywords = brief.keywords.filter((k) => occurrencesInNormal(k, read.normalBody, brief.language) === 0);
  return {
    checks: [
      check("length", text.words >= lengthRange.min && text.words <= lengthRange.max, text.words, `${lengthRange.min}–${lengthRange.max} words`),
      ...keywordChecks(brief, text, read),
      brief.keywords.length === 0 ? notMeasured("keywords_present", "no keywords asked") : check("keywords_present", missingKeywords.length === 0, missingKeywords, "none missing"),
      ...headingChecks(headings),
      brief.includeFaq ? check("faq_section", hasFaq, hasFaq, "present") : notMeasured("faq_section", "no FAQ asked"),
      check("meta_title_length", titleLength <= META_TITLE_MAX, titleLength, `≤ ${META_TITLE_MAX} characters`),
      check(
        "meta_description_length",
        descriptionLength !== null && descriptionLength >= META_DESCRIPTION.min && descriptionLength <= META_DESCRIPTION.max,
        descriptionLength,
        `${META_DESCRIPTION.min}–${META_DESCRIPTION.max} characters`,
      ),
      languageCheck(brief, read.prose),
      readabilityCheck(brief, read.prose),
      check("no_placeholder_text", placeholders.length === 0, placeholders, "none"),
      check("no_filler", filler.length === 0, filler, "no stock filler phrase, no repeated paragraph"),
      check("complete_ending", !endsMidSentence(text.body), !endsMidSentence(text.body), "the last sentence is finished"),
      citationCheck(brief, text),
    ],
    repairs: [],
  };
}
