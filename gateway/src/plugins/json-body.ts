// JSON bodies are parsed here, never by Elysia's default parser, so malformed JSON (or bytes that
// are not UTF-8, or nesting past the limit) becomes a 422 reported after authentication instead
// of an early framework error. A body over the size limit is a 413 at once: nothing past the
// limit is read.
import { Elysia } from "elysia";
import { bodyTooLarge, REQUEST_LIMITS } from "./request-limits.ts";

/** Stands in for a body that was sent but is not valid JSON. */
export class MalformedBody {
  constructor(readonly reason: string) {}
}

/** The body's bytes, refused with 413 once they pass the limit (a declared length was checked on arrival). */
async function boundedBytes(request: Request): Promise<Uint8Array> {
  if (request.headers.has("content-length") || !request.body) return new Uint8Array(await request.arrayBuffer());
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > REQUEST_LIMITS.bodyBytes) {
      void reader.cancel().catch(() => {});
      throw bodyTooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/**
 * Whether arrays and objects nest deeper than the limit. Checked without recursion: the parser
 * accepts any depth, but every later step that walks the value (validation, hashing, encoding)
 * recurses and would run out of stack on a body that nests a few thousand levels.
 */
function nestsTooDeep(value: unknown): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  while (pending.length > 0) {
    const [item, depth] = pending.pop()!;
    if (item === null || typeof item !== "object") continue;
    if (depth > REQUEST_LIMITS.bodyDepth) return true;
    for (const child of Array.isArray(item) ? item : Object.values(item)) {
      if (child !== null && typeof child === "object") pending.push([child, depth + 1]);
    }
  }
  return false;
}

// fatal: bytes that are not UTF-8 are refused rather than silently replaced by U+FFFD.
const utf8 = new TextDecoder("utf-8", { fatal: true });

export const jsonBody = new Elysia({ name: "json-body" }).onParse({ as: "global" }, async ({ request, contentType }) => {
  if (request.method === "GET" || request.method === "HEAD") return;
  if (contentType && !contentType.toLowerCase().includes("json")) return new MalformedBody("Content-Type must be application/json.");
  const bytes = await boundedBytes(request);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return new MalformedBody("The request body is not valid UTF-8.");
  }
  if (text.trim() === "") return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return new MalformedBody(`The request body is not valid JSON: ${(error as Error).message}`);
  }
  return nestsTooDeep(parsed) ? new MalformedBody(`The request body nests arrays and objects more than ${REQUEST_LIMITS.bodyDepth} levels deep.`) : parsed;
});
