// The Idempotency-Key header of POST /v1/articles: its shape, and the hash that tells a retry
// of the same request from a different request reusing the key.
import { createHash } from "node:crypto";
import { validationError } from "../errors.ts";

export const IDEMPOTENCY_HEADER = "idempotency-key";
/** Set on a response that repeats the first response of an earlier request with the same key. */
export const REPLAYED_HEADER = "Idempotent-Replayed";

export const MAX_KEY_LENGTH = 255;
const PRINTABLE = /^[\x21-\x7e]+$/;

/** The header's key, undefined when absent; 422 when it is unusable. */
export function idempotencyKeyOf(headers: Headers): string | undefined {
  const raw = headers.get(IDEMPOTENCY_HEADER);
  if (raw === null) return undefined;
  const key = raw.trim();
  if (key.length === 0 || key.length > MAX_KEY_LENGTH || !PRINTABLE.test(key)) {
    throw validationError({ idempotency_key: [`The Idempotency-Key header must be 1 to ${MAX_KEY_LENGTH} visible ASCII characters (a UUID is a good choice).`] });
  }
  return key;
}

/** JSON with object keys sorted at every level: the same body hashes the same however it is spelled. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

export const requestHashOf = (body: unknown) => createHash("sha256").update(canonicalJson(body)).digest("hex");

export const KEY_REUSED_MESSAGE = "This Idempotency-Key was already used with a different request body; use a new key for a different request.";
