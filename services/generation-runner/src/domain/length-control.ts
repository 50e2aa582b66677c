// Length control of a built-in workflow's article. Models miss the length they are asked for: a
// long request comes back at half to two thirds, no call writes much past 1,500 words, a short one
// comes back a quarter long, and a reply that ran out of room stops mid-sentence. So the article
// the last step wrote is measured against target_word_count (words as the quota counts them) and
// brought within tolerance section by section:
//   - a reply cut mid-sentence is trimmed to its last full sentence (nothing is shipped cut);
//   - a section the outline plans and the text lacks (the draft ran out of room) is put in, empty;
//   - each section gets a word budget, its share of the target by the outline's key points;
//   - while the article is short, the section furthest below its budget is extended by a call that
//     writes new paragraphs for it, asking for at most what one call reliably holds;
//   - while it is long, the section furthest above its budget is rewritten shorter.
// Each call asks for its words divided by what the model has delivered per word asked so far in
// this article, so a model that over- or under-writes is met halfway by the second call. The text
// the calls add is the model's own new material for that section: a paragraph of a reply that
// talks about the model, pads with stock filler or repeats one already there is left out (filler.ts).
import { countWords } from "../../../kit/src/words.ts";
import { newMaterial } from "./filler.ts";

/** One model call of the control, checkpointed under `task` by the caller; its markdown reply. */
export type FinishingCall = (task: string, prompt: { system: string; user: string }) => Promise<string>;

export interface LengthBrief {
  target: number;
  title: string;
  language: string;
  tone: string;
  /** The outline step's JSON output, when the workflow has one: its sections weigh the budgets. */
  outline?: string;
  /** Phrases the brief asks for (target keyword, keywords): a section rewritten shorter keeps those it has. */
  keepPhrases?: string[];
}

export interface Section {
  /** The section's heading line ("# Title" for the opening part), or null when the text has none. */
  heading: string | null;
  body: string;
}

// Most words one call is asked for: past a few hundred, models under-write what they are asked.
const MOST_ASKED = 450;
const LEAST_ASKED = 60;
// Fewest words a section is rewritten to: a 100-word article's sections hold 20 to 40 words each.
const TIGHTEST = 20;
// Bounds the calls of one article: a 10,000-word article from a 1,500-word draft takes about 20.
const MOST_CALLS = 40;
// Calls in a row that may bring the article no closer before the control gives up.
const MOST_FRUITLESS = 3;

/** How far from the target an article may land: ±10% from 300 words; below, ±20% or ±30 words, whichever is larger. */
export function lengthTolerance(target: number): number {
  return target >= 300 ? target * 0.1 : Math.max(target * 0.2, 30);
}

/** The sections of a markdown article: the opening part (title and introduction), then one per `##` heading. */
export function sectionsOf(text: string): Section[] {
  const sections: Section[] = [];
  let current: Section = { heading: null, body: "" };
  const lines = text.replace(/\s+$/, "").split("\n");
  if (lines[0]?.startsWith("# ")) current.heading = lines.shift()!;
  for (const line of lines) {
    if (line.startsWith("## ")) {
      sections.push(current);
      current = { heading: line, body: "" };
    } else current.body += `${line}\n`;
  }
  sections.push(current);
  for (const s of sections) s.body = s.body.trim();
  return sections;
}

export function joinSections(sections: Section[]): string {
  return `${sections.map((s) => [s.heading, s.body].filter((part) => part).join("\n\n")).join("\n\n")}\n`;
}

const SENTENCE_END = /[.!?…]["'”’)\]*_]*$/;

/** Whether the text's last line is prose that stops without ending its sentence (a cut reply). */
export function endsMidSentence(text: string): boolean {
  const last = text.trimEnd().split("\n").at(-1)?.trim() ?? "";
  // Headings, table rows, fences and list items end without a full stop; only prose is judged.
  if (last === "" || /^(#|\||```|[-*+] |\d+[.)] )/.test(last)) return false;
  return !SENTENCE_END.test(last);
}

/** The text up to its last full sentence; a final paragraph with no full sentence is dropped. */
export function trimToLastSentence(text: string): string {
  if (!endsMidSentence(text)) return text;
  const trimmed = text.trimEnd();
  const paragraphStart = trimmed.lastIndexOf("\n") + 1;
  const last = trimmed.slice(paragraphStart);
  let end = -1;
  for (const match of last.matchAll(/[.!?…]["'”’)\]*_]*(?=\s)/g)) end = match.index! + match[0].length;
  const kept = end > 0 ? trimmed.slice(0, paragraphStart + end) : trimmed.slice(0, paragraphStart).trimEnd();
  return `${kept}\n`;
}

const normalHeading = (heading: string) => heading.replace(/^#+\s*/, "").toLowerCase().replace(/[^\p{L}\p{N}]+/gu, " ").trim();

/** The outline step's sections (`sections: [{heading, key_points}]`): each heading with its key points' count. */
function outlineSections(outline: string | undefined): { heading: string; points: number }[] {
  try {
    const sections = (JSON.parse(outline ?? "") as { sections?: { heading?: unknown; key_points?: unknown }[] }).sections;
    return (Array.isArray(sections) ? sections : []).flatMap((s) =>
      typeof s?.heading === "string" && s.heading.trim() !== "" ? [{ heading: s.heading.trim(), points: Array.isArray(s.key_points) ? Math.max(1, s.key_points.length) : 1 }] : [],
    );
  } catch {
    // No outline, or not JSON: every section weighs the same.
    return [];
  }
}

/** Key points per outline heading. */
function outlineWeights(outline: string | undefined): Map<string, number> {
  return new Map(outlineSections(outline).map((s) => [normalHeading(s.heading), s.points]));
}

/**
 * The sections with each one the outline plans and the draft lacks put in at its planned place,
 * empty: a draft cut short, or a model that ran out of room, leaves the last sections unwritten,
 * and length control then writes each of them in calls of its own, to its budget.
 */
export function withPlannedSections(sections: Section[], outline: string | undefined): Section[] {
  const planned = outlineSections(outline);
  const present = new Set(sections.flatMap((s) => (s.heading?.startsWith("## ") ? [normalHeading(s.heading)] : [])));
  const result = [...sections];
  // Where the next planned section goes: after the last planned one found so far (or the opening part).
  let after = 0;
  for (const { heading } of planned) {
    const key = normalHeading(heading);
    const at = result.findIndex((s) => s.heading?.startsWith("## ") && normalHeading(s.heading) === key);
    if (at >= 0) after = at;
    else if (!present.has(key)) {
      result.splice(after + 1, 0, { heading: `## ${heading}`, body: "" });
      after++;
    }
  }
  return result;
}

/**
 * Each section's budget of body words: the target less the headings' words, shared by weight. A
 * section the outline plans weighs its key points; one it does not, the outline's mean; the
 * opening part, which introduces rather than covers, half of that.
 */
export function sectionBudgets(sections: Section[], target: number, outline?: string): number[] {
  const planned = outlineWeights(outline);
  const mean = planned.size > 0 ? [...planned.values()].reduce((a, b) => a + b, 0) / planned.size : 1;
  const weights = sections.map((s) => (s.heading === null || s.heading.startsWith("# ") ? mean / 2 : (planned.get(normalHeading(s.heading)) ?? mean)));
  const headingWords = sections.reduce((sum, s) => sum + (s.heading ? countWords(s.heading) : 0), 0);
  const bodyWords = Math.max(0, target - headingWords);
  const total = weights.reduce((a, b) => a + b, 0);
  return weights.map((w) => Math.round((bodyWords * w) / total));
}

/** New material a reply holds for a section: its paragraphs, without title or section headings, cut replies trimmed. */
export function replyBody(reply: string): string {
  const lines = reply.split("\n").filter((line) => !/^#{1,2}\s/.test(line));
  return trimToLastSentence(lines.join("\n").trim()).trim();
}

const SYSTEM =
  "You are the writer of the article below and work on one of its sections at a time. You keep its language, tone and facts, add nothing invented (no statistics, quotations or sources that are not already there), never repeat what the article already says, and return only paragraphs of markdown.";

function sectionLabel(section: Section): string {
  return section.heading && !section.heading.startsWith("# ") ? section.heading : "## Introduction";
}

function extendPrompt(brief: LengthBrief, section: Section, words: number): string {
  if (section.body === "") {
    return `Article title: ${brief.title}
Write about ${words} words of paragraphs for one section of this article that is planned but not written yet (language ${brief.language}, ${brief.tone} tone): the points, examples, steps or detail that belong under its heading. No heading, no filler.

The section:
${sectionLabel(section)}`;
  }
  return `Article title: ${brief.title}
Write about ${words} words of new paragraphs for one section of this article (language ${brief.language}, ${brief.tone} tone).
They carry the section on from where it stops: new points, examples, steps or detail that belong under its heading, in new paragraphs. No heading, no summary of what is already there, no filler.

The section so far:
${sectionLabel(section)}

${section.body}`;
}

const MARKER = /\[(\d{1,3})\]/g;

/**
 * A rewrite of a section with the source numbers the section cited and the rewrite dropped put back,
 * at the end of its last paragraph: a rewrite for length or a repair changes the wording, never
 * which sources the article cites (the prompt asks to keep them; this holds when a reply did not).
 */
export function withCitationsOf(before: string, after: string): string {
  const kept = new Set(Array.from(after.matchAll(MARKER), (m) => m[1]));
  const dropped = [...new Set(Array.from(before.matchAll(MARKER), (m) => m[1]!))].filter((n) => !kept.has(n));
  if (dropped.length === 0 || after.trim() === "") return after;
  const markers = ` ${dropped.map((n) => `[${n}]`).join("")}`;
  const text = after.trimEnd();
  return /[.!?]$/.test(text) ? `${text.slice(0, -1)}${markers}${text.slice(-1)}` : `${text}${markers}`;
}

/** The ask to keep a section's source numbers, when it has any. */
export const keepCitationsNote = (body: string): string => (/\[\d{1,3}\]/.test(body) ? "Keep every bracketed source number, such as [2], with the statement it supports.\n" : "");

/** The brief's phrases a section uses, each asked to be kept by a rewrite (a repair may have just put it there). */
export function keptPhrases(brief: { keepPhrases?: string[] }, section: Section): string {
  const body = section.body.toLowerCase();
  const kept = (brief.keepPhrases ?? []).filter((phrase) => phrase.trim() !== "" && body.includes(phrase.toLowerCase()));
  return kept.map((phrase) => `Use the phrase "${phrase}" as the section uses it now.\n`).join("");
}

function tightenPrompt(brief: LengthBrief, section: Section, words: number): string {
  return `Article title: ${brief.title}
Rewrite one section of this article (language ${brief.language}, ${brief.tone} tone) in about ${words} words.
Keep its main points, facts and order; cut repetition, wordiness and the least useful detail. Return the section's paragraphs only, without its heading.
${keptPhrases(brief, section)}${keepCitationsNote(section.body)}
The section:
${sectionLabel(section)}

${section.body}`;
}

/** The article brought within tolerance of its target by the calls it needs (none when it already is). */
export async function controlLength(text: string, brief: LengthBrief, call: FinishingCall): Promise<string> {
  const drafted = sectionsOf(trimToLastSentence(text));
  const sections = withPlannedSections(drafted, brief.outline);
  const budgets = sectionBudgets(sections, brief.target, brief.outline);
  // A planned section no call has come to yet is not part of the article: never shipped as a bare heading.
  const shipped = () => sections.filter((s) => s.body !== "" || drafted.includes(s));
  const words = () => countWords(joinSections(shipped()));
  // Aiming at the middle half of the tolerance leaves room for the next call's miss.
  const aim = lengthTolerance(brief.target) / 2;
  // Words delivered per word asked, over this article's calls so far.
  let asked = 0;
  let delivered = 0;
  const calibrated = (want: number) => Math.round(want / (asked > 0 ? delivered / asked : 1));
  let fruitless = 0;
  // The closest the article has been to its target: a call that overshot is not what is kept when
  // the calls run out before one brings it back.
  let best = { text: joinSections(shipped()), off: Math.abs(brief.target - words()) };
  for (let n = 1; n <= MOST_CALLS && fruitless < MOST_FRUITLESS; n++) {
    const before = words();
    const gap = brief.target - before;
    if (Math.abs(gap) <= aim) break;
    const bodies = sections.map((s) => countWords(s.body));
    const distance = bodies.map((w, i) => (gap > 0 ? budgets[i]! - w : w - budgets[i]!));
    const i = distance.indexOf(Math.max(...distance));
    const section = sections[i]!;
    let want: number;
    let reply: string;
    if (gap > 0) {
      want = Math.min(gap, Math.max(distance[i]!, LEAST_ASKED), MOST_ASKED);
      const ask = Math.min(Math.max(calibrated(want), LEAST_ASKED), MOST_ASKED);
      const written = replyBody(await call(`length ${n}: extend ${sectionLabel(section).slice(3)}`, { system: SYSTEM, user: extendPrompt(brief, section, ask) }));
      asked += ask;
      delivered += countWords(written);
      // Only new material goes in: a paragraph of model talk, stock filler or repetition is not length.
      reply = newMaterial(written, joinSections(sections));
      if (reply) section.body = `${section.body}\n\n${reply}`.trim();
    } else {
      want = Math.max(bodies[i]! - Math.min(-gap, distance[i]!), TIGHTEST);
      const ask = Math.max(calibrated(want), TIGHTEST);
      const written = replyBody(await call(`length ${n}: tighten ${sectionLabel(section).slice(3)}`, { system: SYSTEM, user: tightenPrompt(brief, section, ask) }));
      asked += ask;
      delivered += countWords(written);
      reply = newMaterial(written, joinSections(sections.filter((s) => s !== section)));
      reply = withCitationsOf(section.body, reply);
      // A rewrite that came back empty or longer than the section leaves the section as it was.
      if (reply && countWords(reply) < bodies[i]!) section.body = reply;
    }
    const off = Math.abs(brief.target - words());
    fruitless = off < Math.abs(gap) ? 0 : fruitless + 1;
    if (off < best.off) best = { text: joinSections(shipped()), off };
  }
  return best.text;
}
