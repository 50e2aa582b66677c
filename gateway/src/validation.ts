// Field-by-field validation of public request bodies, and the reading of query strings. Every
// failing field is collected, then reported at once as a 422 in the spec's shape. Messages read
// like "The title field must be at least 3 characters.". Every string read here passes one text
// rule first: nothing Postgres cannot store (NUL, unpaired surrogates) gets further. (The lists'
// queries are never refused: articles/reading.ts and workflows/step-input.ts read them.)
import type { FieldErrors } from "../../services/kit/src/errors.ts";
import { isStorableText, jsonHasUnstorableText, UNSTORABLE_TEXT } from "../../services/kit/src/rules/storable-text.ts";
import { validationError } from "./errors.ts";

type Json = Record<string, unknown>;

const label = (field: string) => field.replace(/_/g, " ");

/** Characters as a person counts them (code points): an emoji is one, not two UTF-16 units. */
export const characterCount = (value: string) => {
  let n = 0;
  for (const _ of value) n++;
  return n;
};

interface Presence {
  required?: boolean;
  /** null is accepted and returned as null. */
  nullable?: boolean;
  /** Unused here: present so a request's field table (openapi/fields.ts) is passed as it is. */
  description?: string;
}

export class Validator {
  readonly errors: FieldErrors = {};
  readonly input: Json;

  constructor(input: unknown) {
    if (input === null || typeof input !== "object" || Array.isArray(input)) {
      this.input = {};
      this.fail("body", "The request body must be a JSON object.");
    } else {
      this.input = input as Json;
    }
  }

  fail(field: string, message: string): void {
    (this.errors[field] ??= []).push(message);
  }

  /** The text rule: false (and the field failed) for a string Postgres cannot store. */
  storable(field: string, value: string): boolean {
    if (isStorableText(value)) return true;
    this.fail(field, `The ${label(field)} field ${UNSTORABLE_TEXT}.`);
    return false;
  }

  has(field: string): boolean {
    return this.input[field] !== undefined;
  }

  get valid(): boolean {
    return Object.keys(this.errors).length === 0;
  }

  /** Throws the 422 when anything failed. */
  check(): void {
    if (!this.valid) throw validationError(this.errors);
  }

  private present(field: string, opts: Presence): "absent" | "null" | "value" {
    const value = this.input[field];
    if (value === undefined || (value === null && !opts.nullable)) {
      if (opts.required) this.fail(field, `The ${label(field)} field is required.`);
      return "absent";
    }
    return value === null ? "null" : "value";
  }

  string(field: string, opts: Presence & { min?: number; max?: number } = {}): string | null | undefined {
    const state = this.present(field, opts);
    if (state !== "value") return state === "null" ? null : undefined;
    const value = this.input[field];
    if (typeof value !== "string") return void this.fail(field, `The ${label(field)} field must be a string.`);
    if (!this.storable(field, value)) return undefined;
    if (opts.required && value.trim() === "") return void this.fail(field, `The ${label(field)} field is required.`);
    const length = opts.min !== undefined || opts.max !== undefined ? characterCount(value) : 0;
    if (opts.min !== undefined && length < opts.min) return void this.fail(field, `The ${label(field)} field must be at least ${opts.min} characters.`);
    if (opts.max !== undefined && length > opts.max) return void this.fail(field, `The ${label(field)} field must not be greater than ${opts.max} characters.`);
    return value;
  }

  integer(field: string, opts: Presence & { min?: number; max?: number } = {}): number | null | undefined {
    const state = this.present(field, opts);
    if (state !== "value") return state === "null" ? null : undefined;
    const value = this.input[field];
    if (typeof value !== "number" || !Number.isInteger(value)) return void this.fail(field, `The ${label(field)} field must be an integer.`);
    const { min, max } = opts;
    if ((min !== undefined && value < min) || (max !== undefined && value > max)) {
      const range = min !== undefined && max !== undefined ? `between ${min} and ${max}` : min !== undefined ? `at least ${min}` : `at most ${max}`;
      return void this.fail(field, `The ${label(field)} field must be ${range}.`);
    }
    return value;
  }

  boolean(field: string, opts: Presence = {}): boolean | undefined {
    if (this.present(field, opts) !== "value") return undefined;
    const value = this.input[field];
    if (typeof value !== "boolean") return void this.fail(field, `The ${label(field)} field must be true or false.`);
    return value;
  }

  oneOf<T extends string>(field: string, allowed: readonly T[], opts: Presence = {}): T | null | undefined {
    const state = this.present(field, opts);
    if (state !== "value") return state === "null" ? null : undefined;
    const value = this.input[field];
    if (typeof value === "string" && !this.storable(field, value)) return undefined;
    if (typeof value !== "string" || !allowed.includes(value as T)) {
      return void this.fail(field, `The selected ${label(field)} is invalid. Allowed: ${allowed.join(", ")}.`);
    }
    return value as T;
  }

  /** An array of strings; each item checked with maxItemLength. */
  stringArray(field: string, opts: Presence & { maxItems?: number; maxItemLength?: number; item?: (s: string) => string | null } = {}): string[] | undefined {
    if (this.present(field, opts) !== "value") return undefined;
    const value = this.input[field];
    if (!Array.isArray(value)) return void this.fail(field, `The ${label(field)} field must be an array.`);
    return this.items(field, value, opts);
  }

  /** Checks a list's size and items; shared by array and comma-separated inputs. */
  items(field: string, value: unknown[], opts: { maxItems?: number; maxItemLength?: number; item?: (s: string) => string | null }): string[] | undefined {
    let ok = true;
    if (opts.maxItems !== undefined && value.length > opts.maxItems) {
      this.fail(field, `The ${label(field)} field must not have more than ${opts.maxItems} items.`);
      ok = false;
    }
    value.forEach((item, i) => {
      if (typeof item !== "string") {
        this.fail(`${field}.${i}`, `The ${label(field)}.${i} field must be a string.`);
        ok = false;
      } else if (!this.storable(`${field}.${i}`, item)) {
        ok = false;
      } else if (opts.maxItemLength !== undefined && characterCount(item) > opts.maxItemLength) {
        this.fail(`${field}.${i}`, `The ${label(field)}.${i} field must not be greater than ${opts.maxItemLength} characters.`);
        ok = false;
      } else if (opts.item) {
        const problem = opts.item(item);
        if (problem) {
          this.fail(`${field}.${i}`, problem);
          ok = false;
        }
      }
    });
    return ok ? (value as string[]) : undefined;
  }

  object(field: string, opts: Presence = {}): Json | null | undefined {
    const state = this.present(field, opts);
    if (state !== "value") return state === "null" ? null : undefined;
    const value = this.input[field];
    if (typeof value !== "object" || Array.isArray(value)) return void this.fail(field, `The ${label(field)} field must be an object.`);
    // Kept as JSON (jsonb), which refuses the same characters in any key or string inside.
    if (jsonHasUnstorableText(value)) return void this.fail(field, `The ${label(field)} field ${UNSTORABLE_TEXT}.`);
    return value as Json;
  }
}

/** A query string's values; null for one that is not percent-encoded UTF-8 (a lone surrogate's %ED%A0%80). */
export type QueryValues = Record<string, string | null | undefined>;

/**
 * Reads the query of a request URL. Parsed here rather than by the framework, which passes an
 * undecodable value on as its raw escapes; a repeated name keeps its last value.
 */
export function queryValues(url: string): QueryValues {
  const values: QueryValues = {};
  const start = url.indexOf("?");
  if (start < 0) return values;
  const end = url.indexOf("#", start);
  for (const pair of url.slice(start + 1, end < 0 ? undefined : end).split("&")) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    const name = decoded(eq < 0 ? pair : pair.slice(0, eq));
    if (name !== null) values[name] = eq < 0 ? "" : decoded(pair.slice(eq + 1));
  }
  return values;
}

function decoded(part: string): string | null {
  try {
    return decodeURIComponent(part.replace(/\+/g, " "));
  } catch {
    return null;
  }
}
