// Repairs of a built-in workflow's article that failed a brief check the pipeline can fix. Each is
// one targeted call whose reply replaces only the part of the text the check is about (never a new
// article): a section holding model talk or stock filler, rewritten without it (a paragraph that
// repeats an earlier one is padding and is dropped without a call), the introduction for a keyword missing from its first words, the most related section's
// heading for a keyword missing from every H2, the most related section for a keyword missing from the text, a new FAQ section when one was asked for and is missing, the
// meta description when its length is off. An article gets at most `budget` repair calls; what
// still fails stays on its report as a failed check. The title is never touched: the article keeps
// the title it was submitted with.
import type { QualityRepair, QualityReport } from "../../../kit/src/rules/quality-report.ts";
import { occurrencesOf } from "./brief-checks.ts";
import { fillerIn, paragraphKey, placeholdersIn, repeatedParagraphs } from "./filler.ts";
import { joinSections, keepCitationsNote, keptPhrases, replyBody, sectionsOf, withCitationsOf, type FinishingCall, type Section } from "./length-control.ts";

export interface RepairBrief {
  title: string;
  language: string;
  tone: string;
  targetKeyword?: string;
  /** Phrases the brief asks for (target keyword, keywords): a section rewritten without its filler keeps those it has. */
  keepPhrases?: string[];
}

export interface RepairedText {
  text: string;
  description: string | null;
  repairs: QualityRepair[];
  /** Repair calls made (a repeated paragraph is dropped without one). */
  calls: number;
}

const SYSTEM =
  "You are the writer of the article below and change one part of it at a time. You keep its language, tone and facts, add nothing invented (no statistics, quotations or sources that are not already there), and return only the part asked for, in markdown.";

const FAQ_WORDS = 150;
const DESCRIPTION = { min: 120, max: 160 };

const labelOf = (heading: string | null) => (heading && heading.startsWith("## ") ? heading.slice(3) : "Introduction");

/** The article's section headings as a list, for calls that need to know what it covers but not its text. */
const covered = (sections: { heading: string | null }[]) => sections.flatMap((s) => (s.heading?.startsWith("## ") ? [`- ${s.heading.slice(3)}`] : [])).join("\n");

/** The section whose words the keyword shares most, where it reads most naturally; the first one on a tie. */
function mostRelated(sections: Section[], keyword: string, language: string): Section {
  const scores = sections.map((s) => keyword.split(/\s+/).reduce((sum, word) => sum + occurrencesOf(word, `${s.heading ?? ""}\n${s.body}`, language), 0));
  return sections[scores.indexOf(Math.max(...scores))]!;
}

/** A one-line reply (a heading, a description) as plain text: heading marks, quotes and any line after the first go. */
const firstLine = (reply: string): string | undefined =>
  reply.split("\n").map((l) => l.replace(/^#+\s*/, "").replace(/^["“']+|["”']+$/g, "").trim()).find((l) => l !== "");

/** Drops every paragraph that repeats an earlier one (padding, not material): no call needed. */
function removeFiller(sections: Section[], repairs: QualityRepair[]): void {
  const repeated = new Set(repeatedParagraphs(joinSections(sections)).map(paragraphKey));
  if (repeated.size === 0) return;
  const seen = new Set<string>();
  for (const section of sections) {
    // The first of each repeated paragraph stays, where it first says what it says.
    const kept = section.body.split(/\n\s*\n/).filter((paragraph) => {
      const key = paragraphKey(paragraph);
      if (!repeated.has(key)) return true;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    if (kept.length < section.body.split(/\n\s*\n/).length) {
      section.body = kept.join("\n\n");
      repairs.push({ check: "no_filler", action: "dropped a repeated paragraph", part: labelOf(section.heading) });
    }
  }
}

/** The failed fixable checks of a report, each repaired by `call` in report order, at most `budget` calls in all. */
export async function repairBrief(text: string, description: string | null, report: QualityReport, brief: RepairBrief, budget: number, call: FinishingCall): Promise<RepairedText> {
  const sections = sectionsOf(text);
  const repairs: QualityRepair[] = [];
  const failed = new Map(report.checks.filter((c) => c.status === "failed").map((c) => [c.name, c]));
  const about = `Article title: ${brief.title}\nLanguage ${brief.language}, ${brief.tone} tone.`;
  // Calls made: a repeated paragraph is dropped without one.
  let calls = 0;
  const spent = () => calls >= budget;
  const task = (what: string) => `repair ${++calls}: ${what}`;

  if (failed.has("no_filler") || failed.has("no_placeholder_text")) removeFiller(sections, repairs);
  // A section still holding model talk or stock filler is rewritten without it, one call each.
  for (const section of sections) {
    const talk = placeholdersIn(section.body).length > 0;
    if (spent() || (!talk && fillerIn(section.body).length === 0)) continue;
    const check = talk ? "no_placeholder_text" : "no_filler";
    const reply = replyBody(
      await call(task(check), {
        system: SYSTEM,
        user: `${about}
Rewrite one section of this article in about the same length without its filler: no remark about yourself or the request, no placeholder, no stock phrase such as "In conclusion" or "It is important to note", no summary of what the article already said. Keep its main points, facts and order. Return the section's paragraphs only, without its heading.
${keptPhrases(brief, section)}${keepCitationsNote(section.body)}
The section:
## ${labelOf(section.heading)}

${section.body}`,
      }),
    );
    if (reply) section.body = withCitationsOf(section.body, reply);
    repairs.push({ check, action: "rewrote a section without its filler", part: labelOf(section.heading) });
  }

  const keyword = brief.targetKeyword?.trim();
  if (keyword && failed.has("keyword_in_introduction") && !spent()) {
    const opening = sections[0]!;
    const reply = replyBody(
      await call(task("keyword_in_introduction"), {
        system: SYSTEM,
        user: `${about}
Rewrite the introduction of this article in about the same length. Use the phrase "${keyword}" in the first sentence, as a reader would expect it there. Return its paragraphs only, without a heading.
${keepCitationsNote(opening.body)}
The introduction:
${opening.body}`,
      }),
    );
    if (reply) opening.body = withCitationsOf(opening.body, reply);
    repairs.push({ check: "keyword_in_introduction", action: "rewrote the introduction", part: "Introduction", keyword });
  }

  const headed = sections.filter((s) => s.heading?.startsWith("## "));
  if (keyword && failed.has("keyword_in_h2") && headed.length > 0 && !spent()) {
    const section = mostRelated(headed, keyword, brief.language);
    const before = labelOf(section.heading);
    const line = firstLine(
      await call(task("keyword_in_h2"), {
        system: SYSTEM,
        user: `${about}
Rename one section heading of this article so that it includes the phrase "${keyword}" and still names what the section covers. Return the heading line only.

The heading: ${before}
The section begins: ${section.body.split("\n\n")[0]}`,
      }),
    );
    if (line) section.heading = `## ${line}`;
    repairs.push({ check: "keyword_in_h2", action: "renamed a section heading", part: before, keyword });
  }

  const missing = failed.get("keywords_present")?.value;
  for (const phrase of Array.isArray(missing) ? missing : []) {
    if (spent()) break;
    const section = mostRelated(sections.length > 1 ? sections.slice(1) : sections, phrase, brief.language);
    const reply = replyBody(
      await call(task("keywords_present"), {
        system: SYSTEM,
        user: `${about}
Rewrite one section of this article in about the same length so that it uses the phrase "${phrase}" where it fits naturally. Keep its main points, facts and order. Return the section's paragraphs only, without its heading.
${keepCitationsNote(section.body)}
The section:
## ${labelOf(section.heading)}

${section.body}`,
      }),
    );
    if (reply) section.body = withCitationsOf(section.body, reply);
    repairs.push({ check: "keywords_present", action: "wove a keyword into a section", part: labelOf(section.heading), keyword: phrase });
  }

  if (failed.has("faq_section") && !spent()) {
    const reply = await call(task("faq_section"), {
      system: SYSTEM,
      user: `${about}
Write the FAQ section this article lacks, about ${FAQ_WORDS} words: three or four questions a reader of it would ask, each answered in a short paragraph from what the article says. Begin with the heading line below, in the article's language.

## Frequently Asked Questions

The article covers:
${covered(sections)}`,
    });
    // The reply from its section heading on; a reply without one gets the heading asked for.
    const headingLine = /^## .+$/m.exec(reply);
    const heading = headingLine ? headingLine[0].trim() : "## Frequently Asked Questions";
    const body = replyBody(headingLine ? reply.slice(headingLine.index + headingLine[0].length) : reply);
    if (body) sections.push({ heading, body });
    repairs.push({ check: "faq_section", action: "wrote the FAQ section", part: heading.slice(3) });
  }

  let repairedDescription = description;
  // A description of the wrong length is rewritten; a workflow that writes none (the single-step
  // built-in) is left without one.
  if (description !== null && failed.has("meta_description_length") && !spent()) {
    const reply = await call(task("meta_description_length"), {
      system: SYSTEM,
      user: `${about}
Write the meta description of this article: between ${DESCRIPTION.min} and ${DESCRIPTION.max} characters, spaces included, one or two complete sentences that tell a searcher what they will get${keyword ? `, with the phrase "${keyword}"` : ""}. Return the description only.

The current one (${[...description].length} characters):
${description}

The article covers:
${covered(sections)}`,
    });
    const line = firstLine(reply);
    if (line) repairedDescription = line;
    repairs.push({ check: "meta_description_length", action: "rewrote the meta description", part: "description" });
  }

  return { text: repairs.length > 0 ? joinSections(sections) : text, description: repairedDescription, repairs, calls };
}
