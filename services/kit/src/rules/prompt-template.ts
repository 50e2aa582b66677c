// Prompt templates of workflow steps (spec 2.5): the variable vocabulary, validation helpers,
// single-pass rendering, the {requirements} editor's brief and the tone → temperature mapping.
// Pure functions only: the catalog validates with them, the runner renders with them.

/** Variables every step may use, whatever its flags. */
export const ALWAYS_AVAILABLE_VARIABLES = [
  "title",
  "target_keyword",
  "article_type",
  "tone",
  "point_of_view",
  "language",
  "country_targeting",
  "target_word_count",
] as const;

/** Step flags that open a gated variable. */
export type GateFlag =
  | "include_additional_context"
  | "include_additional_instruction"
  | "include_requirements"
  | "include_research"
  | "include_outline";

/** Gated variables and the flag that must be set on the step for each to carry a value. */
export const GATED_VARIABLES: Readonly<Record<string, GateFlag>> = Object.freeze({
  additional_context: "include_additional_context",
  additional_instruction: "include_additional_instruction",
  requirements: "include_requirements",
  research: "include_research",
  // The numbered list of pages read ("[n] Title (Site) — URL"), for prompts that cite them.
  sources: "include_research",
  outline: "include_outline",
});

/** The context flags of a step; BuiltinStep and stored steps both satisfy it. */
export interface StepFlags {
  include_additional_context?: boolean;
  include_additional_instruction?: boolean;
  include_requirements?: boolean;
  include_research?: boolean;
  include_outline?: boolean;
}

/** Everything a template can draw on when one step of one article runs. */
export interface TemplateValues {
  title: string;
  target_keyword?: string | null;
  article_type: string;
  tone: string;
  point_of_view: string;
  language: string;
  country_targeting?: string | null;
  target_word_count: number | string;
  additional_context?: string | null;
  additional_instruction?: string | null;
  /** Usually renderRequirements(...) for the article. */
  requirements?: string | null;
  research?: string | null;
  sources?: string | null;
  outline?: string | null;
  /** Outputs of steps already run, keyed by step_number (a position, not an index). */
  step_outputs?: ReadonlyMap<number, string> | Readonly<Record<number, string>>;
}

// Braces around an identifier; JSON-looking text such as {"a": 1} or { } never matches, so prompts
// may show JSON examples freely.
const VARIABLE_TOKEN = /\{([a-z_][a-z0-9_]*)\}/gi;
// Canonical positions only (no zero, no leading zeros) so a validator and the runner agree.
const STEP_OUTPUT = /^step_([1-9][0-9]*)_output$/;

const ALWAYS = new Set<string>(ALWAYS_AVAILABLE_VARIABLES);

function stepOutputNumber(name: string): number | null {
  const match = STEP_OUTPUT.exec(name);
  return match ? Number(match[1]) : null;
}

// Own keys only: "constructor" or "toString" must never count as variables or tones.
function lookup<V>(table: Readonly<Record<string, V>>, key: string): V | undefined {
  return Object.hasOwn(table, key) ? table[key] : undefined;
}

/** True for every name of the vocabulary, including step_N_output with N ≥ 1. Case-sensitive. */
export function isTemplateVariable(name: string): boolean {
  return ALWAYS.has(name) || lookup(GATED_VARIABLES, name) !== undefined || stepOutputNumber(name) !== null;
}

function variableNames(template: string): string[] {
  return Array.from(template.matchAll(VARIABLE_TOKEN), (m) => m[1]);
}

/** Names written as {name} that the vocabulary does not know, each once, in order of first use. */
export function findUnknownVariables(template: string): string[] {
  return unique(variableNames(template).filter((name) => !isTemplateVariable(name)));
}

/** Step positions referenced through {step_N_output}, ascending, each once. */
export function stepOutputReferences(template: string): number[] {
  const numbers = variableNames(template)
    .map(stepOutputNumber)
    .filter((n): n is number => n !== null);
  return unique(numbers).sort((a, b) => a - b);
}

/** Gated variables the template uses although the step's flag is off (they would render empty). */
export function gatedVariablesWithoutFlag(template: string, flags: StepFlags): string[] {
  return unique(
    variableNames(template).filter((name) => {
      const gate = lookup(GATED_VARIABLES, name);
      return gate !== undefined && !flags[gate];
    }),
  );
}

function stepOutput(outputs: TemplateValues["step_outputs"], position: number): string {
  if (!outputs) return "";
  const value = outputs instanceof Map ? outputs.get(position) : (outputs as Record<number, string>)[position];
  return value ?? "";
}

function text(value: string | number | null | undefined): string {
  return value === null || value === undefined ? "" : String(value);
}

/**
 * Replaces every variable occurrence exactly once. Values are inserted literally: a title or a step
 * output that itself contains "{title}" is never expanded again, so user text cannot inject prompt
 * material. Gated variables are "" unless the step sets their flag; a missing step output is "";
 * tokens outside the vocabulary stay as written.
 */
export function renderTemplate(template: string, values: TemplateValues, flags: StepFlags): string {
  return template.replace(VARIABLE_TOKEN, (token, name: string) => {
    if (ALWAYS.has(name)) return text(values[name as (typeof ALWAYS_AVAILABLE_VARIABLES)[number]]);
    const gate = lookup(GATED_VARIABLES, name);
    if (gate !== undefined) {
      return flags[gate] ? text(values[name as keyof TemplateValues] as string | null | undefined) : "";
    }
    const position = stepOutputNumber(name);
    if (position !== null) return stepOutput(values.step_outputs, position);
    return token;
  });
}

function unique<T>(items: T[]): T[] {
  return [...new Set(items)];
}

// ---------------------------------------------------------------------------------------------
// {requirements}: the editor's brief handed to steps with include_requirements.

export type Tone = "professional" | "authoritative" | "friendly" | "conversational" | "casual" | "excited" | "humorous";
export type PointOfView = "first_person" | "first_person_plural" | "second_person" | "third_person";
export type HeadingCapitalization = "title" | "sentence";

export interface RequirementsInput {
  target_word_count: number;
  tone: Tone | string;
  point_of_view: PointOfView | string;
  language: string;
  country_targeting?: string | null;
  target_audience?: string | null;
  target_keyword?: string | null;
  keywords?: readonly string[] | null;
  include_key_takeaways?: boolean;
  include_faq?: boolean;
  /** Real questions searchers ask (from a fresh SERP analysis), preferred for the FAQ. */
  faq_questions?: readonly string[] | null;
  heading_capitalization?: HeadingCapitalization | null;
  brand_voice?: { name: string; description?: string | null } | null;
}

const TONE_GUIDANCE: Record<Tone, string> = {
  professional:
    "Clear, polished and businesslike: precise wording, no slang, confident but never salesy.",
  authoritative:
    "Expert and assured: make firm, well-supported statements, explain the reasoning, avoid hedging filler.",
  friendly: "Warm and approachable: plain words, encouraging, like a knowledgeable friend helping out.",
  conversational:
    "Natural and relaxed, as if talking to the reader: contractions, short sentences, the odd rhetorical question.",
  casual: "Easygoing and informal: everyday language and light phrasing, while staying accurate and clear.",
  excited: "Energetic and enthusiastic: vivid verbs and momentum, without exaggerating facts or piling up exclamation marks.",
  humorous:
    "Witty and playful: light jokes and wordplay where they fit, never at the expense of clarity, accuracy or the reader.",
};

const POINT_OF_VIEW_GUIDANCE: Record<PointOfView, string> = {
  first_person: 'Write as a single author ("I", "my"), sharing your own judgement and experience.',
  first_person_plural: 'Write as the publication or team ("we", "our"), speaking with one collective voice.',
  second_person: 'Address the reader directly as "you" throughout.',
  third_person: 'Stay neutral and impersonal: no "I", "we" or "you" outside quotations.',
};

const LANGUAGE_NAMES: Record<string, string> = {
  en: "English",
  es: "Spanish",
  fr: "French",
  de: "German",
  it: "Italian",
  pt: "Portuguese",
  ru: "Russian",
  ja: "Japanese",
  ko: "Korean",
  zh: "Chinese",
};

const COUNTRY_NAMES: Record<string, string> = {
  US: "the United States",
  GB: "the United Kingdom",
  CA: "Canada",
  AU: "Australia",
  DE: "Germany",
  FR: "France",
  ES: "Spain",
  IT: "Italy",
  BR: "Brazil",
  MX: "Mexico",
};

function label(value: string): string {
  return value.replaceAll("_", " ");
}

function present(value: string | null | undefined): value is string {
  return typeof value === "string" && value.trim() !== "";
}

// Made once: a new Intl.NumberFormat costs about a tenth of a millisecond, every article's run made one.
const thousands = new Intl.NumberFormat("en-US");

/** The {requirements} text: one brief covering length, voice, market and the requested extras. */
export function renderRequirements(input: RequirementsInput): string {
  const words = thousands.format(input.target_word_count);
  const lines: string[] = ["Editorial requirements:"];

  lines.push(
    `- Length: aim for about ${words} words of article text (within roughly 10%). It is a target, not a cap: never pad to reach it or cut substance to stay under it.`,
  );
  const tone = lookup(TONE_GUIDANCE, input.tone);
  lines.push(`- Tone: ${label(input.tone)}.${tone ? ` ${tone}` : ""}`);
  const pov = lookup(POINT_OF_VIEW_GUIDANCE, input.point_of_view);
  lines.push(`- Point of view: ${label(input.point_of_view)}.${pov ? ` ${pov}` : ""}`);

  const language = lookup(LANGUAGE_NAMES, input.language);
  lines.push(
    `- Language: write everything, headings included, in ${language ? `${language} (${input.language})` : input.language}, as a native writer would.`,
  );
  if (present(input.country_targeting)) {
    const country = lookup(COUNTRY_NAMES, input.country_targeting) ?? input.country_targeting;
    lines.push(
      `- Market: readers in ${country} (${input.country_targeting}). Use local spelling, units, currency, dates and examples; mention local rules or availability where they matter.`,
    );
  }
  if (present(input.target_audience)) {
    lines.push(`- Audience: ${input.target_audience.trim()}. Match their level of knowledge and answer the questions they would ask.`);
  }
  if (present(input.target_keyword)) {
    lines.push(
      `- Primary keyword: "${input.target_keyword.trim()}". Use it naturally in the first paragraph and in at least one heading.`,
    );
  }
  const keywords = (input.keywords ?? []).map((k) => k.trim()).filter(Boolean);
  if (keywords.length > 0) {
    lines.push(`- Keywords to weave in where they read naturally (never stuffed): ${keywords.join(", ")}.`);
  }
  if (input.include_key_takeaways) {
    lines.push(
      '- Key takeaways: directly after the introduction, add a "Key takeaways" section of 3 to 5 bullets summarising the main points.',
    );
  }
  if (input.include_faq) {
    lines.push(
      "- FAQ: after the conclusion, add an FAQ section of 4 to 6 questions, each answered in 2 to 4 sentences without repeating the body word for word.",
    );
    const questions = (input.faq_questions ?? []).map((q) => q.trim()).filter(Boolean);
    if (questions.length > 0) {
      lines.push("  Prefer these real questions searchers ask (light grammar fixes only):");
      for (const question of questions) lines.push(`  - ${question}`);
    }
  }
  if (input.heading_capitalization === "title") {
    lines.push("- Headings: Title Case (capitalize every major word).");
  } else if (input.heading_capitalization === "sentence") {
    lines.push("- Headings: sentence case (capitalize only the first word and proper nouns).");
  }
  if (input.brand_voice && present(input.brand_voice.name)) {
    const description = present(input.brand_voice.description) ? ` ${input.brand_voice.description.trim()}` : "";
    lines.push(`- Brand voice "${input.brand_voice.name.trim()}": write in this voice throughout.${description}`);
  }
  return lines.join("\n");
}

// ---------------------------------------------------------------------------------------------
// Tone → sampling temperature (spec 2.7: formal tones cooler, expressive tones hotter).

// Formal tones want consistent, precise wording, so sampling stays cool; conversational tones
// benefit from some variety; playful tones need the surprise that only a hotter sampler gives.
const TONE_TEMPERATURE: Record<Tone, number> = {
  authoritative: 0.4,
  professional: 0.5,
  friendly: 0.7,
  conversational: 0.7,
  casual: 0.8,
  excited: 0.9,
  humorous: 1.0,
};

// An unknown tone (e.g. from an older article) gets the middle of the range rather than an error.
const DEFAULT_TEMPERATURE = 0.7;

export function temperatureForTone(tone: Tone | string): number {
  return lookup(TONE_TEMPERATURE, tone) ?? DEFAULT_TEMPERATURE;
}
