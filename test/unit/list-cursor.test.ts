// The article list's cursor (gateway/src/articles/list-cursor.ts): what it encodes comes back
// exactly for the list it was given for; any other list, and anything that does not decode, is a
// 422 on `cursor` in the spec's validation shape.
import { describe, expect, test } from "bun:test";
import { decodeCursor, encodeCursor, type CursorScope } from "../../gateway/src/articles/list-cursor.ts";
import { HttpError } from "../../gateway/src/errors.ts";

const scope: CursorScope = { accountId: 7, status: "completed", projectId: 12 };
const place = { createdAtMs: 1_733_000_000_123, id: 987_654, page: 3 };

/** The 422 body a cursor is refused with. */
function refusal(cursor: string | null, within = scope): { status: number; body: unknown } {
  try {
    decodeCursor(cursor, within);
  } catch (error) {
    if (error instanceof HttpError) return { status: error.status, body: error.body };
    throw error;
  }
  throw new Error("the cursor was taken");
}

describe("list cursor", () => {
  test("the place it was made from comes back, for the same list; it is URL-safe as it is", () => {
    const cursor = encodeCursor(place, scope);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor, { ...scope })).toEqual(place);
    const unfiltered = { accountId: 7 };
    expect(decodeCursor(encodeCursor(place, unfiltered), unfiltered)).toEqual(place);
  });

  test("another account, status or project_id (or none) is refused as another list's", () => {
    const cursor = encodeCursor(place, scope);
    for (const other of [{ ...scope, accountId: 8 }, { ...scope, status: "failed" }, { ...scope, status: undefined }, { ...scope, projectId: 13 }, { ...scope, projectId: undefined }]) {
      const { status, body } = refusal(cursor, other);
      expect(status).toBe(422);
      expect(body).toEqual({ message: expect.stringContaining("another list"), errors: { cursor: [expect.stringContaining("another list")] } });
    }
  });

  test("what does not decode, or leads past the last page a request can name, is refused as malformed", () => {
    const parts = (text: string) => Buffer.from(text).toString("base64url");
    for (const cursor of [null, "", "not a cursor", "a".repeat(201), parts("c1.1.2.3"), parts("c2.1.2.3.x"), parts("c1.1e3.2.3.x"), parts("c1.1.2.1.x"), parts(`c1.${"9".repeat(17)}.2.3.x`), encodeCursor({ ...place, page: 2 ** 31 }, scope)]) {
      const { status, body } = refusal(cursor);
      expect(status).toBe(422);
      expect(body).toEqual({ message: expect.stringContaining("not one this list gave"), errors: { cursor: [expect.stringContaining("not one this list gave")] } });
    }
  });
});
