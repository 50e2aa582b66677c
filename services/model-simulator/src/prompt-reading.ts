// Reads what a writer needs out of a free-form prompt: a title, a topic phrase, keywords and the
// requested length. Prompts come from many pipeline steps, so every rule has a fallback.

import { withoutDirectives } from "./directives.ts";

export const DEFAULT_WORDS = 400;
export const MAX_WORDS = 12_000;

const STOPWORDS = new Set(
  (
    "a an and are as at be been but by can could did do does for from had has have how i if in into is it its " +
    "may me more most my no not of on or our out over should so some such than that the their them then there " +
    "these they this those to too under up us very was we were what when where which while who why will with " +
    "would you your about above after again against all also any because before being below between both each " +
    "few further here just once only other own same she he her his him very well yes via per " +
    // instruction words that say how to write, not what about
    "write writing written article articles post blog words word section sections include including using use " +
    "please make sure following follow based provide return json format markdown target count length tone " +
    "audience keyword keywords title topic outline draft step steps paragraph paragraphs heading headings " +
    "must need needs given content output reply respond answer text language english plain style voice " +
    "mention explain describe cover covering focus discuss ensure avoid like want good great best readers reader " +
    "article's tips guide introduction overview complete ultimate simple practical"
  ).split(/\s+/),
);

/** The length a text asks for, e.g. "1500 words", "target_word_count: 1500"; capped; null if none. */
export function wordsAskedFor(text: string): number | null {
  const keyed = /(?:target_)?word[_ ]?count["']?\s*[:=]\s*["']?(\d[\d,]*)/i.exec(text);
  const phrased = /(\d[\d,]*)\s*(?:-\s*)?words?\b/i.exec(text);
  const raw = keyed?.[1] ?? phrased?.[1];
  if (!raw) return null;
  const words = Number.parseInt(raw.replace(/,/g, ""), 10);
  if (!Number.isFinite(words) || words <= 0) return null;
  return Math.min(words, MAX_WORDS);
}

function labelledLine(prompt: string, labels: string): string | null {
  const pattern = new RegExp(`^[\\s>*_-]*(?:${labels})\\**\\s*[:=]\\**\\s*(.+)$`, "im");
  const raw = pattern.exec(prompt)?.[1]?.trim() ?? "";
  // A quoted value ends at its closing quote: `Keyword: "coffee". Use it early.` names "coffee".
  const quoted = /^["“]([^"”]+)["”]/.exec(raw)?.[1];
  const value = (quoted ?? raw).replace(/^["'*]+|["'*]+$/g, "").trim();
  return value ? value : null;
}

const LEAD_INS = [
  /^(?:please\s+)?(?:write|draft|create|generate|produce|compose)\s+(?:me\s+)?(?:an?|the|one)?\s*(?:\d[\d,]*[- ]words?\s+)?(?:[\w-]+\s+){0,3}?(?:article|blog post|post|piece|guide|essay|story|overview|outline|introduction|summary)\s+(?:about|on|for|covering|explaining|that explains)\s+/i,
  /^(?:please\s+)?(?:write|draft|create|generate|produce|explain|describe|summari[sz]e)\s+(?:about\s+)?/i,
  /^(?:tell me|talk) about\s+/i,
];

export function titleCase(phrase: string): string {
  const small = new Set(["a", "an", "and", "as", "at", "but", "by", "for", "in", "of", "on", "or", "the", "to", "vs", "with"]);
  return phrase
    .split(/\s+/)
    .filter(Boolean)
    .map((word, i) => (i > 0 && small.has(word.toLowerCase()) ? word.toLowerCase() : word[0].toUpperCase() + word.slice(1)))
    .join(" ");
}

function firstSentence(prompt: string): string {
  const line = withoutDirectives(prompt)
    .split("\n")
    .map((l) => l.trim())
    .find((l) => /[\p{L}\p{N}]/u.test(l));
  if (!line) return "";
  const sentence = line.split(/[.!?](?:\s|$)/)[0].replace(/^#+\s*/, "");
  let cleaned = sentence;
  for (const leadIn of LEAD_INS) cleaned = cleaned.replace(leadIn, "");
  return cleaned.replace(/["“”]/g, "").split(/\s+/).slice(0, 12).join(" ").replace(/[,;:]+$/, "");
}

/** A title: an explicit `Title:` line wins, then a topic/keyword line, then the first sentence. */
export function titleFor(prompt: string): string {
  const explicit = labelledLine(prompt, "title|working title|headline|article title");
  if (explicit) return explicit;
  // A draft quoted in the prompt (an editing step) carries its title as a markdown H1.
  const heading = /^#\s+(.+)$/m.exec(prompt)?.[1]?.trim();
  if (heading) return heading;
  const topic = labelledLine(prompt, "topic|target_keyword|target keyword|primary keyword|keyword|subject");
  const phrase = topic ?? firstSentence(prompt);
  return phrase ? titleCase(phrase) : "A Practical Guide";
}

/** The noun phrase the prose talks about, e.g. "coffee grinders" from "Coffee Grinders: A Buyer's Guide". */
export function topicFor(prompt: string, title = titleFor(prompt)): string {
  const labelled = labelledLine(prompt, "topic|target_keyword|target keyword|primary keyword|keyword|subject");
  let phrase = labelled ?? title;
  phrase = phrase.split(/[:|–—]/)[0];
  phrase = phrase.replace(
    /^(?:the\s+|an?\s+)?(?:(?:complete|ultimate|practical|essential|definitive|beginner'?s|quick|simple)\s+)*(?:guide|introduction|primer|handbook)\s+(?:to|for|on)\s+/i,
    "",
  );
  phrase = phrase.replace(/^(?:how to|why|what (?:is|are)|everything you need to know about|understanding)\s+/i, "");
  const words = phrase
    .replace(/[^\p{L}\p{N}\s'-]/gu, " ")
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 6)
    .map((w) => (/[A-Z].*[A-Z]/.test(w) ? w : w.toLowerCase()));
  while (words.length > 1 && STOPWORDS.has(words[words.length - 1].toLowerCase())) words.pop();
  // A phrase of nothing but filler ("A Practical Guide") says nothing about the subject.
  if (!words.some((w) => !STOPWORDS.has(w.toLowerCase()))) return "the subject";
  return words.join(" ");
}

/**
 * Phrases the prose can drop into sentences: the topic's head noun phrase first (written most
 * often), then adjacent content-word pairs, then other content words from the prompt.
 */
export function keywordsFor(prompt: string, topic: string): string[] {
  const keywords: string[] = [];
  const add = (phrase: string) => {
    if (phrase && !keywords.includes(phrase)) keywords.push(phrase);
  };
  const isContent = (word: string) => word.length > 2 && !STOPWORDS.has(word.toLowerCase());
  const words = topic.split(/\s+/).filter(Boolean);
  const stop = words.findIndex((w, i) => i > 0 && !isContent(w));
  add((stop === -1 ? words : words.slice(0, stop)).join(" "));
  for (let i = 0; i + 1 < words.length; i++) if (isContent(words[i]) && isContent(words[i + 1])) add(`${words[i]} ${words[i + 1]}`);

  const counts = new Map<string, number>();
  const topicWords = new Set(words.map((w) => w.toLowerCase()));
  for (const word of withoutDirectives(prompt).toLowerCase().match(/\p{L}[\p{L}'-]{3,}/gu) ?? []) {
    if (!STOPWORDS.has(word) && !topicWords.has(word)) counts.set(word, (counts.get(word) ?? 0) + 1);
  }
  // Frequent words first; ties keep the order they appear in, which Map iteration preserves.
  const ranked = [...counts.entries()].sort((a, b) => b[1] - a[1]);
  for (const [word] of ranked.slice(0, 3)) add(word);
  for (const word of words) if (isContent(word) && keywords.length < 4) add(word.toLowerCase());
  if (keywords.length === 0) add(topic);
  return keywords.slice(0, 6);
}

/** `##` headings already in the prompt (an outline from an earlier step) become the sections. */
export function outlineHeadings(prompt: string): string[] {
  const headings: string[] = [];
  for (const match of withoutDirectives(prompt).matchAll(/^#{2,3}\s+(.+?)\s*#*\s*$/gm)) {
    const heading = match[1].trim();
    if (heading && !headings.includes(heading)) headings.push(heading);
  }
  return headings.slice(0, 12);
}

/** Phrases the prompt asks the text to use, quoted: `Use the phrase "burr grinder"`, `include the keyword "x"`. */
export function phrasesAskedFor(prompt: string): string[] {
  const phrases: string[] = [];
  for (const match of withoutDirectives(prompt).matchAll(/\b(?:use|include|mention)s?\s+(?:the\s+)?(?:exact\s+)?(?:phrase|keyword|term)\s+["“]([^"”\n]+)["”]/gi)) {
    const phrase = match[1]!.trim();
    if (phrase && !phrases.includes(phrase)) phrases.push(phrase);
  }
  return phrases;
}

/** Whether the prompt asks for a single heading back ("Return the heading line only"). */
export const asksForHeadingOnly = (prompt: string): boolean => /\breturn (?:only )?the (?:new )?heading(?: line)?(?: only)?\b/i.test(withoutDirectives(prompt));

/** Whether the prompt asks for a meta description itself (not an article that has one). */
export const asksForMetaDescription = (prompt: string): boolean => /\bwrite\s+(?:the|a|an)\s+(?:new\s+)?meta description\b/i.test(withoutDirectives(prompt));

/** The length in characters a prompt asks for, e.g. "between 120 and 160 characters", "at most 155 characters"; null if none. */
export function charactersAskedFor(prompt: string): { min: number; max: number } | null {
  const text = withoutDirectives(prompt);
  const range = /(\d+)\s*(?:-|–|to|and)\s*(\d+)\s*characters/i.exec(text);
  if (range) return { min: Number(range[1]), max: Number(range[2]) };
  const most = /(?:at most|up to|no more than|under)\s+(\d+)\s*characters/i.exec(text);
  return most ? { min: 0, max: Number(most[1]) } : null;
}
