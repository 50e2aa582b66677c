// Deterministic prose: sentences drawn from a bank and filled with the prompt's topic and keywords,
// sized to land on the requested word count so length rules downstream can be exercised.

import { diceFor, type Dice } from "./prompt-seed.ts";
import { countWords } from "../../kit/src/words.ts";
import { titleCase } from "./prompt-reading.ts";
import { GERMAN, type ProseBank } from "./prose-banks.ts";

export interface Subject {
  /** Noun phrase the text is about, lower case ("coffee grinders"). */
  topic: string;
  keywords: string[];
  /** The language the prompt asked for, when the simulator writes it (prose-banks.ts); English otherwise. */
  language?: "de";
}

const SENTENCES = [
  "Most people who look into {T} start with one question: what actually makes a difference?",
  "The short answer is that getting {K} right matters more than the marketing suggests.",
  "A {A} approach to {T} tends to pay off sooner than expected.",
  "It helps to separate what is essential from what is merely nice to have.",
  "When you handle {K} well, everything downstream becomes easier to manage.",
  "Experienced practitioners rarely chase perfection; they aim for {A} results they can repeat.",
  "Consider {N} first, because it shapes every later decision about {K}.",
  "Small adjustments to {K} often produce a noticeable change in the outcome.",
  "There is no single right answer, but there are clear patterns worth following.",
  "Budget, time and experience all influence which path makes sense for {T}.",
  "Before committing, write down what success with {T} would look like in practical terms.",
  "A common mistake is to treat {K} as an afterthought rather than a starting point.",
  "The difference between a good result and a great one usually comes down to {N}.",
  "Anyone new to {T} should focus on the fundamentals before worrying about edge cases.",
  "Over time, a {A} routine around {K} builds confidence and saves effort.",
  "Comparing a few options side by side makes the trade-offs much easier to see.",
  "{K} and {K2} are closely linked, so a change to one will affect the other.",
  "Independent reviews and long-term reports are more useful than first impressions.",
  "It is worth revisiting your assumptions about {K} every few months.",
  "Clear goals turn {T} from a vague ambition into a series of manageable steps.",
  "Quality rarely depends on a single factor; it is the sum of many {A} choices.",
  "If something feels overly complicated, there is probably a simpler way to approach {K}.",
  "Tracking a few simple measures makes progress with {T} visible.",
  "The best advice is often the least glamorous: be consistent and pay attention to {N}.",
  "Many of the questions people ask about {K} have straightforward answers.",
  "Cost matters, but the cheapest option can become the most expensive one over time.",
  "Hands-on experience with {T} beats theory once the basics are in place.",
  "Take notes as you go, since details about {K} are easy to forget.",
  "Expect a short learning curve, and treat early mistakes as useful feedback.",
  "Professionals tend to agree that it pays to give {K} more attention than it usually gets.",
  "A checklist keeps the important parts of {T} from slipping through the cracks.",
  "Where possible, test ideas on a small scale before rolling them out widely.",
  "The right choice depends on your situation, not on what worked for someone else.",
  "Good habits around {K} compound, much like interest in a savings account.",
  "Context matters: what suits a beginner may frustrate someone with more experience.",
  "Looking at real examples is the fastest way to understand {T} in practice.",
  "Seasoned users of {K} often say the first few weeks teach the most.",
  "A little {N} up front prevents most of the problems people run into later.",
  "Simple tools, used well, beat complicated ones.",
  "Nobody gets {K} perfect on the first attempt.",
  "Write down what works and repeat it.",
  "Reliable results come from a repeatable process.",
  "The fundamentals of {K} rarely change.",
  "Experience shows where the real effort belongs.",
  "Good information makes every later step easier.",
];
const OPENERS = ["In practice, ", "For example, ", "That said, ", "As a rule, ", "Equally, ", "In many cases, ", "Above all, "];
const ADJECTIVES = ["practical", "reliable", "thoughtful", "consistent", "measured", "deliberate", "sensible", "steady", "patient", "well-planned"];
const NOUNS = ["preparation", "timing", "consistency", "planning", "maintenance", "attention to detail", "feedback", "practice"];
// Short closers fill the last few words of a paragraph so lengths land close to the target.
const CLOSERS: Record<number, string[]> = {
  2: ["Start small.", "Stay curious.", "Keep going.", "Test often.", "Measure progress."],
  3: ["Keep it simple.", "Patience pays off.", "Details matter here.", "Small wins count.", "Progress beats perfection."],
  4: ["Plan first, then adjust.", "That makes a difference.", "Every situation is different.", "Review and refine regularly."],
  5: ["This is worth remembering too.", "Small steps add up quickly.", "Good preparation saves time later.", "Simple routines work best here."],
  6: ["A little preparation goes a long way.", "The basics deserve more attention here.", "Few shortcuts survive real-world use."],
};
const SECTION_HEADINGS = [
  "The Case for {T}",
  "Understanding {K}",
  "Getting Started",
  "Choosing the Right {K}",
  "Common Mistakes to Avoid",
  "Practical Tips for {T}",
  "How to Get Better Results",
  "What Experienced Users Recommend",
  "Planning Ahead",
  "Measuring Progress",
  "Costs and Trade-offs",
  "Details People Often Overlook",
];
const CLOSING_HEADING = "Final Thoughts";
const DESCRIPTIONS = [
  "A practical look at {T}: what matters, the common mistakes and how to get reliable results.",
  "Everything you need to know about {T}, from the basics to the details experienced people check first.",
  "Learn how to approach {T} with clear steps, honest trade-offs and tips you can use today.",
];
const ENGLISH: ProseBank = {
  sentences: SENTENCES,
  openers: OPENERS,
  adjectives: ADJECTIVES,
  nouns: NOUNS,
  closers: CLOSERS,
  headings: SECTION_HEADINGS,
  closing: CLOSING_HEADING,
  descriptions: DESCRIPTIONS,
};

/** The bank the subject is written from. */
const bankOf = (subject: { language?: "de" }): ProseBank => (subject.language === "de" ? GERMAN : ENGLISH);

function fill(template: string, subject: Subject, dice: Dice): string {
  const keywords = subject.keywords.length > 0 ? subject.keywords : [subject.topic];
  // The head phrase is what the text is about, so it comes up about half the time.
  const first = dice.next() < 0.5 ? keywords[0] : dice.pick(keywords);
  // "coffee grinders and coffee" reads badly, so the second phrase must not overlap the first.
  const others = keywords.filter((k) => !first.includes(k) && !k.includes(first));
  const text = template
    .replace("{T}", subject.topic)
    .replace("{K}", first)
    .replace("{K2}", others.length > 0 ? dice.pick(others) : "the wider process")
    .replace("{A}", dice.pick(bankOf(subject).adjectives))
    .replace("{N}", dice.pick(bankOf(subject).nouns));
  return text[0].toUpperCase() + text.slice(1);
}

// Templates used lately per dice, so neighbouring sentences do not repeat each other.
const recentTemplates = new WeakMap<Dice, number[]>();

function sentence(subject: Subject, dice: Dice): string {
  const recent = recentTemplates.get(dice) ?? [];
  const { sentences, openers } = bankOf(subject);
  let index = dice.between(0, sentences.length - 1);
  for (let tries = 0; tries < 8 && recent.includes(index); tries++) index = dice.between(0, sentences.length - 1);
  recentTemplates.set(dice, [...recent, index].slice(-Math.floor(sentences.length / 2)));
  const text = fill(sentences[index], subject, dice);
  if (dice.next() >= 0.2 || openers.length === 0) return text;
  return dice.pick(openers) + (/^[A-Z](?![A-Z])/.test(text) ? text[0].toLowerCase() + text.slice(1) : text);
}

function closer(words: number, dice: Dice, subject: Subject): string {
  return dice.pick(bankOf(subject).closers[words]!);
}

/**
 * One paragraph of as close to `words` words as the bank allows (never off by more than one), and
 * the words it holds, counted sentence by sentence as it is written (a closer in the bank may hold
 * a word more or less than the length it is filed under).
 */
function writeParagraph(subject: Subject, words: number, dice: Dice): { text: string; words: number } {
  const sentences: string[] = [];
  let remaining = words;
  let written = 0;
  let attempts = 0;
  while (remaining >= 7 && attempts < 40) {
    attempts++;
    const candidate = sentence(subject, dice);
    const length = countWords(candidate);
    const left = remaining - length;
    if (left === 0 || left >= 2) {
      sentences.push(candidate);
      remaining = left;
      written += length;
    }
  }
  while (remaining >= 2) {
    let length = Math.min(6, remaining);
    if (remaining - length === 1) length--;
    const text = closer(length, dice, subject);
    sentences.push(text);
    remaining -= length;
    written += countWords(text);
  }
  return { text: sentences.join(" "), words: written };
}

/** Paragraphs totalling `words`, each about 50–110 words. */
export function writeParagraphs(subject: Subject, words: number, dice: Dice): string[] {
  const count = Math.max(1, Math.round(words / 80));
  const paragraphs: string[] = [];
  let written = 0;
  for (let i = 0; i < count; i++) {
    const share = Math.round(((i + 1) * words) / count) - Math.round((i * words) / count);
    const jitter = i < count - 1 && share > 40 ? dice.between(-10, 10) : 0;
    // The last paragraph absorbs any drift so the total stays on target.
    const target = i === count - 1 ? words - written : share + jitter;
    const paragraph = writeParagraph(subject, target, dice);
    written += paragraph.words;
    paragraphs.push(paragraph.text);
  }
  return paragraphs.filter((p) => p.length > 0);
}

export function sectionHeadings(subject: Subject, count: number, dice: Dice): string[] {
  const topic = titleCase(subject.topic);
  const keyword = titleCase(subject.keywords[0] ?? subject.topic);
  const bank = bankOf(subject);
  const headings = dice.shuffled([...bank.headings]).slice(0, Math.max(0, count - 1));
  return [...headings.map((h) => h.replace("{T}", topic).replace("{K}", keyword)), bank.closing];
}

export interface ArticleRequest extends Subject {
  title: string;
  words: number;
  /** Section headings to use (e.g. from an outline); invented when empty. */
  headings?: string[];
  seed: string;
}

/** A markdown article: `# Title`, an introduction, then `##` sections, about `words` long. */
export function writeArticle(request: ArticleRequest): string {
  const dice = diceFor(request.seed);
  const titleWords = countWords(request.title);
  const words = Math.max(request.words, titleWords + 5);
  if (words < 60) {
    return `# ${request.title}\n\n${writeParagraph(request, words - titleWords, dice).text}\n`;
  }
  const sectionCount = Math.min(12, Math.max(1, Math.round(words / 220)));
  const given = request.headings?.filter(Boolean) ?? [];
  const headings = given.length > 0 ? given.slice(0, 12) : sectionHeadings(request, sectionCount, dice);
  const headingWords = headings.reduce((sum, h) => sum + countWords(h), 0);
  const body = Math.max(words - titleWords - headingWords, 10 * (headings.length + 1));

  const introWords = Math.round(body / (headings.length + 1));
  const parts = [`# ${request.title}`, ...writeParagraphs(request, introWords, dice)];
  let written = introWords;
  headings.forEach((heading, i) => {
    const share = i === headings.length - 1 ? body - written : Math.round((body - introWords) / headings.length);
    written += share;
    parts.push(`## ${heading}`, ...writeParagraphs(request, share, dice));
  });
  return parts.join("\n\n") + "\n";
}

/** One plain sentence about the subject, at most `maxChars` long. */
export function writeSentence(subject: Subject, dice: Dice, maxChars = 200): string {
  for (let i = 0; i < 20; i++) {
    const text = fill(dice.pick(bankOf(subject).sentences), subject, dice);
    if (text.length <= maxChars) return text;
  }
  return clip(`A closer look at ${subject.topic}.`, maxChars);
}

/** A search-snippet style description of at most 155 characters. */
export function writeDescription(subject: Subject, dice: Dice, maxChars = 155): string {
  return clip(fill(dice.pick(bankOf(subject).descriptions), subject, dice), maxChars);
}

/** A description within `bounds` characters: a description, then sentences about the subject until it is long enough. */
export function writeDescriptionWithin(subject: Subject, dice: Dice, bounds: { min: number; max: number }): string {
  let text = writeDescription(subject, dice, bounds.max);
  for (let i = 0; i < 10 && text.length < bounds.min; i++) {
    const more = writeSentence(subject, dice, bounds.max - text.length - 1);
    if (text.length + 1 + more.length <= bounds.max) text = `${text} ${more}`;
  }
  return text;
}

/**
 * The article with each phrase in its opening sentence, as a writer asked to use a phrase puts it:
 * a phrase the first paragraph lacks gets a sentence of its own at the paragraph's start.
 */
export function openingWith(article: string, phrases: readonly string[], subject: Subject, dice: Dice): string {
  const paragraphs = article.split("\n\n");
  const first = paragraphs.findIndex((p) => p.trim() !== "" && !p.startsWith("#"));
  if (first < 0) return article;
  for (const phrase of [...phrases].reverse()) {
    if (paragraphs[first]!.toLowerCase().includes(phrase.toLowerCase())) continue;
    const templates = bankOf(subject).sentences.filter((t) => t.includes("{K}") && !t.includes("{K2}"));
    paragraphs[first] = `${fill(dice.pick(templates), { ...subject, keywords: [phrase] }, dice)} ${paragraphs[first]}`;
  }
  return paragraphs.join("\n\n");
}

/** A section heading naming `phrase`, as a writer asked to put it in a heading words one. */
export function headingWith(phrase: string, dice: Dice, language?: "de"): string {
  return dice.pick(bankOf({ language }).headings.filter((h) => h.includes("{K}"))).replace("{K}", titleCase(phrase));
}

/** Cut at a word boundary and keep a full stop at the end. */
export function clip(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  const cut = text.slice(0, Math.max(1, maxChars - 1)).replace(/\s+\S*$/, "").replace(/[,;:\s]+$/, "");
  return (cut || text.slice(0, maxChars - 1)) + ".";
}
