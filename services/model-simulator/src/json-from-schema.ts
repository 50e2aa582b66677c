// Structured-output steps get JSON that satisfies their schema, with values chosen by property name
// so the result reads like a real model's answer (a `title` is a title, `content` is an article).

import { diceFor, fingerprint, type Dice } from "./prompt-seed.ts";
import { clip, sectionHeadings, writeArticle, writeDescription, writeParagraphs, writeSentence, type Subject } from "./writer.ts";

export type JsonSchema = { [key: string]: unknown };

export interface JsonContext extends Subject {
  title: string;
  /** Word count for article-like fields. */
  words: number;
  seed: string;
}

interface Place {
  name: string;
  /** Position inside the nearest array, so siblings differ. */
  index: number;
  insideArray: boolean;
  words: number;
  depth: number;
}

const MAX_DEPTH = 12;
const QUESTIONS = [
  "What is the best way to get started with {T}?",
  "How much does {T} usually cost?",
  "What are the most common mistakes with {T}?",
  "How long does it take to see results with {T}?",
  "Is {T} worth it for beginners?",
  "What should you check before choosing {T}?",
];

export function jsonFromSchema(schema: JsonSchema, context: JsonContext): unknown {
  const builder = new JsonBuilder(schema, context);
  return builder.value(schema, { name: "", index: 0, insideArray: false, words: context.words, depth: 0 });
}

/** `json_object` mode has no schema: a small object a caller can parse. */
export function smallJsonObject(context: JsonContext): Record<string, unknown> {
  const dice = diceFor(context.seed);
  return {
    title: context.title,
    summary: writeDescription(context, dice),
    keywords: context.keywords.slice(0, 3),
  };
}

class JsonBuilder {
  private readonly dice: Dice;

  constructor(
    private readonly root: JsonSchema,
    private readonly context: JsonContext,
  ) {
    this.dice = diceFor(context.seed + "\u0000json");
  }

  value(raw: JsonSchema, place: Place): unknown {
    const schema = this.resolve(raw);
    if (place.depth > MAX_DEPTH) return null;
    if ("const" in schema) return schema.const;
    if (Array.isArray(schema.enum) && schema.enum.length > 0) {
      return schema.enum.find((v) => v !== null) ?? schema.enum[0];
    }
    const options = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
    if (Array.isArray(options) && options.length > 0) {
      const chosen = options.find((o) => this.resolve(o).type !== "null") ?? options[0];
      return this.value(chosen, place);
    }
    if (Array.isArray(schema.allOf)) return this.value(this.mergeAll(schema), place);

    switch (this.typeOf(schema)) {
      case "object":
        return this.object(schema, place);
      case "array":
        return this.array(schema, place);
      case "integer":
        return Math.round(this.number(schema, place, true));
      case "number":
        return this.number(schema, place, false);
      case "boolean":
        return true;
      case "null":
        return null;
      default:
        return this.string(schema, place);
    }
  }

  private resolve(schema: JsonSchema): JsonSchema {
    let current = schema;
    for (let hops = 0; typeof current.$ref === "string" && hops < 20; hops++) {
      const path = (current.$ref as string).replace(/^#\/?/, "").split("/").filter(Boolean);
      let target: unknown = this.root;
      for (const part of path) target = (target as JsonSchema | undefined)?.[part.replace(/~1/g, "/").replace(/~0/g, "~")];
      if (!target || typeof target !== "object") return {};
      current = target as JsonSchema;
    }
    return current;
  }

  private mergeAll(schema: JsonSchema): JsonSchema {
    const merged: JsonSchema = { ...schema, allOf: undefined };
    const properties: JsonSchema = {};
    const required: string[] = [];
    for (const part of [schema, ...(schema.allOf as JsonSchema[])].map((s) => this.resolve(s))) {
      Object.assign(properties, part.properties ?? {});
      required.push(...((part.required as string[] | undefined) ?? []));
      if (part.type && !merged.type) merged.type = part.type;
    }
    delete merged.allOf;
    return { ...merged, properties, required };
  }

  private typeOf(schema: JsonSchema): string {
    const type = schema.type;
    if (Array.isArray(type)) return (type.find((t) => t !== "null") as string | undefined) ?? "null";
    if (typeof type === "string") return type;
    if (schema.properties) return "object";
    if (schema.items || schema.prefixItems) return "array";
    return "string";
  }

  private object(schema: JsonSchema, place: Place): Record<string, unknown> {
    const result: Record<string, unknown> = {};
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
    for (const [name, property] of Object.entries(properties)) {
      result[name] = this.value(property, { ...place, name, depth: place.depth + 1 });
    }
    // A required name without a declared schema still needs a value.
    for (const name of (schema.required as string[] | undefined) ?? []) {
      if (!(name in result)) result[name] = this.value({}, { ...place, name, depth: place.depth + 1 });
    }
    return result;
  }

  private array(schema: JsonSchema, place: Place): unknown[] {
    const min = typeof schema.minItems === "number" ? schema.minItems : 0;
    const max = typeof schema.maxItems === "number" ? schema.maxItems : Number.POSITIVE_INFINITY;
    const count = Math.max(min, Math.min(3, max));
    const prefix = (schema.prefixItems ?? []) as JsonSchema[];
    const items = (schema.items && typeof schema.items === "object" ? schema.items : {}) as JsonSchema;
    const name = singular(place.name);
    const values: unknown[] = [];
    for (let index = 0; index < count; index++) {
      const itemSchema = prefix[index] ?? items;
      values.push(
        this.value(itemSchema, { name, index, insideArray: true, words: Math.max(40, Math.round(place.words / count)), depth: place.depth + 1 }),
      );
    }
    return values;
  }

  private number(schema: JsonSchema, place: Place, integer: boolean): number {
    const name = place.name.toLowerCase();
    let low = typeof schema.minimum === "number" ? schema.minimum : typeof schema.exclusiveMinimum === "number" ? schema.exclusiveMinimum + (integer ? 1 : 0.01) : Number.NaN;
    let high = typeof schema.maximum === "number" ? schema.maximum : typeof schema.exclusiveMaximum === "number" ? schema.exclusiveMaximum - (integer ? 1 : 0.01) : Number.NaN;
    let preferred = this.dice.between(3, 9);
    if (/word/.test(name)) preferred = place.words;
    else if (/year/.test(name)) preferred = 2024;
    else if (/score|rating|confidence/.test(name)) preferred = !Number.isNaN(high) && high <= 1 ? 0.8 : 8;
    else if (/order|position|rank|index|number/.test(name)) preferred = place.index + 1;
    if (Number.isNaN(low)) low = Number.NEGATIVE_INFINITY;
    if (Number.isNaN(high)) high = Number.POSITIVE_INFINITY;
    let value = Math.min(high, Math.max(low, preferred));
    if (integer) {
      value = Math.round(value);
      if (value > high) value = Math.floor(high);
      if (value < low) value = Math.ceil(low);
    }
    return value;
  }

  private string(schema: JsonSchema, place: Place): string {
    let text = this.stringFor(schema, place);
    const maxLength = typeof schema.maxLength === "number" ? schema.maxLength : undefined;
    const minLength = typeof schema.minLength === "number" ? schema.minLength : 0;
    while (text.length < minLength) text += (text ? " " : "") + writeSentence(this.context, this.dice);
    if (maxLength !== undefined && text.length > maxLength) text = clip(text, maxLength).slice(0, maxLength);
    return text;
  }

  private stringFor(schema: JsonSchema, place: Place): string {
    const name = place.name.toLowerCase();
    const { topic } = this.context;
    switch (schema.format) {
      case "date-time":
        return "2024-05-01T09:00:00Z";
      case "date":
        return "2024-05-01";
      case "time":
        return "09:00:00";
      case "email":
        return "editor@example.com";
      case "uri":
      case "url":
        return `https://example.com/${slugify(this.context.title)}`;
      case "uuid":
        return uuidFrom(this.context.seed + place.name + place.index);
    }
    if (/(^|_)(content|body|markdown|article|draft|html|text_markdown)$/.test(name)) {
      // Nested in an array it is a section's body, so no article title of its own.
      return place.insideArray
        ? writeParagraphs(this.context, place.words, this.dice).join("\n\n")
        : writeArticle({ ...this.context, words: place.words, seed: this.context.seed + place.name });
    }
    if (/description|summary|excerpt|snippet|subtitle/.test(name)) return writeDescription(this.context, this.dice);
    if (/slug/.test(name)) return slugify(this.context.title);
    if (/title|headline|heading|^h[1-3]$/.test(name)) {
      if (!place.insideArray) return this.context.title;
      return sectionHeadings(this.context, 12, diceFor(this.context.seed))[place.index % 11];
    }
    if (/keyword|tag|term/.test(name)) return this.context.keywords[place.index % this.context.keywords.length] ?? topic;
    if (/question|query/.test(name)) return QUESTIONS[place.index % QUESTIONS.length].replace("{T}", topic);
    if (/(^|_)alt/.test(name)) return `Illustration of ${topic}`;
    if (/prompt/.test(name)) return `A clean editorial photograph illustrating ${topic}, natural light, no text`;
    if (/url|link|href|source/.test(name)) return `https://example.com/${slugify(topic)}`;
    if (/lang|locale/.test(name)) return "en";
    if (/tone|voice/.test(name)) return "informative";
    if (/(^|_)id$/.test(name)) return `item-${place.index + 1}`;
    if (/(^|_)name$|author/.test(name)) return "Editorial Team";
    return writeSentence(this.context, this.dice, 160);
  }
}

function singular(name: string): string {
  if (/ies$/.test(name)) return name.replace(/ies$/, "y");
  if (/sses$/.test(name)) return name.replace(/es$/, "");
  return name.replace(/s$/, "");
}

export function slugify(text: string): string {
  return (
    text
      .toLowerCase()
      .normalize("NFKD")
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 80)
      .replace(/-+$/, "") || "article"
  );
}

function uuidFrom(text: string): string {
  const hex = (fingerprint(text) + fingerprint(text + "!")).slice(0, 32);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
