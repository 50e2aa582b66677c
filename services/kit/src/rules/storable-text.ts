// Text Postgres can store. NUL (U+0000) is refused by text and jsonb columns alike, and an unpaired
// UTF-16 surrogate has no UTF-8 form (it would be stored as U+FFFD, or refused inside jsonb). Both
// are refused as invalid input wherever they arrive, instead of failing in the database: by the
// gateway in /v1 requests (validation.ts) and by every service in its callers' (service-process.ts).
import type { DescField, DescMessage } from "@bufbuild/protobuf";
import { ScalarType } from "@bufbuild/protobuf";
import type { Interceptor } from "@connectrpc/connect";
import { invalidFields } from "../errors.ts";

// With the u flag a well-formed surrogate pair is one code point, so only unpaired halves match.
const UNSTORABLE = /[\u0000\uD800-\uDFFF]/u;

export const isStorableText = (value: string) => !UNSTORABLE.test(value);

/** The end of a field's message: "The title field must not contain …". */
export const UNSTORABLE_TEXT = "must not contain NUL (U+0000) or unpaired surrogate characters";

/** Paths (proto field names, list positions, map keys) of every string in a message that cannot be stored. */
export function unstorableFields(desc: DescMessage, message: object): string[] {
  const found: string[] = [];
  walkMessage(desc, message as Record<string, unknown>, "", found);
  return found;
}

function walkMessage(desc: DescMessage, message: Record<string, unknown>, prefix: string, found: string[]): void {
  for (const member of desc.members) {
    if (member.kind === "oneof") {
      const chosen = message[member.localName] as { case?: string; value?: unknown } | undefined;
      const field = chosen?.case === undefined ? undefined : member.fields.find((f) => f.localName === chosen.case);
      if (field) walkField(field, chosen!.value, prefix + field.name, found);
    } else {
      walkField(member, message[member.localName], prefix + member.name, found);
    }
  }
}

function walkValue(field: DescField, kind: "scalar" | "message" | "enum" | undefined, value: unknown, path: string, found: string[]): void {
  // Well-known wrappers (StringValue) arrive unboxed as plain strings.
  if (typeof value === "string") {
    if (!isStorableText(value)) found.push(path);
  } else if (kind === "message" && value !== null && typeof value === "object" && field.message) {
    walkMessage(field.message, value as Record<string, unknown>, `${path}.`, found);
  }
}

function walkField(field: DescField, value: unknown, path: string, found: string[]): void {
  if (value === undefined || value === null) return;
  switch (field.fieldKind) {
    case "scalar":
      if (field.scalar === ScalarType.STRING) walkValue(field, "scalar", value, path, found);
      return;
    case "message":
      walkValue(field, "message", value, path, found);
      return;
    case "list":
      if (field.listKind === "enum" || (field.listKind === "scalar" && field.scalar !== ScalarType.STRING)) return;
      (value as unknown[]).forEach((item, i) => walkValue(field, field.listKind, item, `${path}.${i}`, found));
      return;
    case "map":
      for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
        if (!isStorableText(key)) found.push(path);
        if (field.mapKind === "message" || (field.mapKind === "scalar" && field.scalar === ScalarType.STRING)) walkValue(field, field.mapKind, item, `${path}.${key}`, found);
      }
      return;
    default:
      return;
  }
}

/** Whether a parsed JSON value holds, in any key or string, text that cannot be stored. */
export function jsonHasUnstorableText(value: unknown): boolean {
  if (typeof value === "string") return !isStorableText(value);
  if (Array.isArray(value)) return value.some(jsonHasUnstorableText);
  if (value !== null && typeof value === "object") {
    return Object.entries(value).some(([key, item]) => !isStorableText(key) || jsonHasUnstorableText(item));
  }
  return false;
}

/**
 * Every unary call whose request carries such text is refused with INVALID_ARGUMENT naming the
 * fields, before any handler reads it: the same rule the gateway applies to public requests.
 */
export function refuseUnstorableText(): Interceptor {
  return (next) => async (req) => {
    if (!req.stream) {
      const fields = unstorableFields(req.method.input, req.message);
      if (fields.length > 0) throw invalidFields(Object.fromEntries(fields.map((field) => [field, [`The ${field} field ${UNSTORABLE_TEXT}.`]])));
    }
    return next(req);
  };
}
