// JSON bodies are parsed here, never by Elysia's default parser, so malformed JSON becomes a 422
// reported after authentication instead of an early framework error.
import { Elysia } from "elysia";

/** Stands in for a body that was sent but is not valid JSON. */
export class MalformedBody {
  constructor(readonly reason: string) {}
}

export const jsonBody = new Elysia({ name: "json-body" }).onParse({ as: "global" }, async ({ request, contentType }) => {
  if (request.method === "GET" || request.method === "HEAD") return;
  if (contentType && !contentType.toLowerCase().includes("json")) return new MalformedBody("Content-Type must be application/json.");
  const text = await request.text();
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch (error) {
    return new MalformedBody(`The request body is not valid JSON: ${(error as Error).message}`);
  }
});
