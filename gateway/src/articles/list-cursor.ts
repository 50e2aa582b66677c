// The list's cursor (GET /v1/articles?cursor=…, meta.next_cursor; ListArticles' cursor): a place
// in the list's order, newest first, so the page after it is one index seek at any depth where
// `page` counts its way there. Opaque to clients: base64url of the version, the last article's
// created_at (milliseconds, the column's precision) and id, the number of the page it leads to
// (meta.current_page goes on counting along the cursors), and a tag of the list it was given for.
//
// The tag (a hash of the key's account, status and project_id) tells a cursor of another list,
// which would walk a different order, from one of this list: such a cursor, or one that does not
// decode, is refused with 422 on `cursor`. It is a check, not a seal: a cursor grants nothing, as
// a page after any place holds only articles of projects the caller can view.
import { validationError } from "../errors.ts";
import { MAX_PAGE } from "../../../services/kit/src/rules/page-window.ts";

/** Where a cursor's page starts, and which page that is. */
export interface ListPlace {
  /** The last listed article's created_at, in milliseconds. */
  createdAtMs: number;
  /** That article's id. */
  id: number;
  /** The page after it, counted from 1 as `page` is. */
  page: number;
}

/** What a cursor is bound to: the list it was given for. */
export interface CursorScope {
  accountId: number;
  status?: string;
  projectId?: number;
}

const VERSION = "c1";
const MALFORMED = "The cursor is not one this list gave: pass meta.next_cursor as it came.";
const FOREIGN = "The cursor was given for another list (another status, project_id or account).";

const scopeTag = ({ accountId, status, projectId }: CursorScope): string => Bun.hash(`${accountId}\n${status ?? ""}\n${projectId ?? ""}`).toString(36);

export function encodeCursor(place: ListPlace, scope: CursorScope): string {
  return Buffer.from(`${VERSION}.${place.createdAtMs}.${place.id}.${place.page}.${scopeTag(scope)}`).toString("base64url");
}

const DIGITS = /^[0-9]{1,16}$/;

/** The place a cursor names; a 422 on `cursor` for one that does not decode or was given for another list. */
export function decodeCursor(cursor: string | null, scope: CursorScope): ListPlace {
  const parts = cursor !== null && /^[A-Za-z0-9_-]{1,200}$/.test(cursor) ? Buffer.from(cursor, "base64url").toString("latin1").split(".") : [];
  const [version, createdAtMs, id, page, tag] = parts;
  const numbers = [createdAtMs, id, page].map((n) => (n !== undefined && DIGITS.test(n) ? Number(n) : NaN));
  if (parts.length !== 5 || version !== VERSION || numbers.some((n) => !Number.isSafeInteger(n)) || numbers[2] < 2 || numbers[2] > MAX_PAGE) {
    throw validationError({ cursor: [MALFORMED] });
  }
  if (tag !== scopeTag(scope)) throw validationError({ cursor: [FOREIGN] });
  return { createdAtMs: numbers[0], id: numbers[1], page: numbers[2] };
}
