// A request's fields described once: the validators take their presence, bounds and allowed values
// from these tables, and the OpenAPI document turns the same tables into JSON Schema, so a bound
// changed in one place changes both the 422 rule and the documentation.
import { Type, type TSchema } from "@sinclair/typebox";
import { DEFAULT_PER_PAGE, MAX_PER_PAGE } from "../../../services/kit/src/rules/page-window.ts";

interface FieldBase {
  description: string;
  required?: boolean;
  /** null is accepted (and means something: cleared, no value). */
  nullable?: boolean;
  example?: unknown;
  default?: unknown;
}

export interface StringField extends FieldBase {
  type: "string";
  /** Lengths in characters (code points). */
  min?: number;
  max?: number;
  enum?: readonly string[];
  format?: "uri" | "uuid" | "hostname" | "date-time";
}
export interface IntegerField extends FieldBase {
  type: "integer";
  min?: number;
  max?: number;
}
export interface BooleanField extends FieldBase {
  type: "boolean";
}
export interface ObjectField extends FieldBase {
  type: "object";
  /** Known properties; without them any JSON object. */
  properties?: FieldTable;
}
export interface ArrayField extends FieldBase {
  type: "array";
  maxItems?: number;
  minItems?: number;
  items: FieldSpec;
  /** Also accepted as one comma-separated string (keywords). */
  orCommaSeparated?: boolean;
}
export type FieldSpec = StringField | IntegerField | BooleanField | ObjectField | ArrayField;
export type FieldTable = Record<string, FieldSpec>;

const annotations = (f: FieldBase) => ({
  description: f.description,
  ...(f.example !== undefined ? { examples: [f.example] } : {}),
  ...(f.default !== undefined ? { default: f.default } : {}),
});

/** The JSON Schema of one field (TypeBox, so it validates values as well as documents them). */
export function fieldSchema(f: FieldSpec): TSchema {
  let schema: TSchema;
  const meta = annotations(f);
  switch (f.type) {
    case "string":
      schema = f.enum
        ? Type.Union(f.enum.map((value) => Type.Literal(value)), { ...meta, type: "string", enum: [...f.enum] })
        : Type.String({ ...meta, ...(f.min !== undefined ? { minLength: f.min } : {}), ...(f.max !== undefined ? { maxLength: f.max } : {}), ...(f.format ? { format: f.format } : {}) });
      break;
    case "integer":
      schema = Type.Integer({ ...meta, ...(f.min !== undefined ? { minimum: f.min } : {}), ...(f.max !== undefined ? { maximum: f.max } : {}) });
      break;
    case "boolean":
      schema = Type.Boolean(meta);
      break;
    case "object":
      schema = f.properties ? objectSchema(f.properties, meta) : Type.Record(Type.String(), Type.Unknown(), meta);
      break;
    case "array": {
      const list = Type.Array(fieldSchema(f.items), {
        ...(f.orCommaSeparated ? {} : meta),
        ...(f.maxItems !== undefined ? { maxItems: f.maxItems } : {}),
        ...(f.minItems !== undefined ? { minItems: f.minItems } : {}),
      });
      schema = f.orCommaSeparated ? Type.Union([list, Type.String({ description: "Comma-separated" })], meta) : list;
      break;
    }
  }
  return f.nullable ? nullable(schema) : schema;
}

/** A value or null, with the value's annotations kept on the outside where viewers look. */
export function nullable(schema: TSchema): TSchema {
  const { description, examples, default: fallback, ...rest } = schema as TSchema & { examples?: unknown[]; default?: unknown };
  return Type.Union([rest as TSchema, Type.Null()], { ...(description ? { description } : {}), ...(examples ? { examples } : {}), ...(fallback !== undefined ? { default: fallback } : {}) });
}

/** A request body's schema from its table: required fields from the table, other properties allowed. */
export function objectSchema(table: FieldTable, options: { description?: string; title?: string; examples?: unknown[] } = {}): TSchema {
  const properties: Record<string, TSchema> = {};
  for (const [name, f] of Object.entries(table)) properties[name] = f.required ? fieldSchema(f) : Type.Optional(fieldSchema(f));
  return Type.Object(properties, options);
}

/** A query parameter list for the document. */
export function queryParameters(table: FieldTable) {
  return Object.entries(table).map(([name, f]) => ({ name, in: "query", required: !!f.required, description: f.description, schema: fieldSchema(f) }));
}

/** page and per_page of a list, as every list reads them (services/kit/src/rules/page-window.ts): never refused, clamped. */
export function pageQueryFields(items: string) {
  return {
    page: { type: "integer", default: 1, description: "Page from 1; a value below 1 or not an integer reads page 1, one past the last page reads a page of nothing." },
    per_page: {
      type: "integer",
      default: DEFAULT_PER_PAGE,
      description: `${items} per page, at most ${MAX_PER_PAGE}: a larger value reads ${MAX_PER_PAGE}, a value below 1 or not an integer the default (${DEFAULT_PER_PAGE}).`,
    },
  } as const satisfies FieldTable;
}
