// The page a list reads (spec 4.2, 4.4). The spec lists no 422 for either list, so nothing in a
// page or per_page value is refused: each is read as the nearest page that makes sense. A page
// below 1 (or not an integer) reads page 1; per_page below 1 (or not an integer) takes the
// default, above the maximum the maximum. The gateway reads both lists' queries with this, and
// article-store and workflow-catalog read their own list requests with it too (0 there means
// unset), so a team calling a service directly gets the same page.

export const DEFAULT_PER_PAGE = 20;
export const MAX_PER_PAGE = 100;
/** The last page a request can name (past it, a page of nothing): the page fields are 32-bit in every contract. */
export const MAX_PAGE = 2_147_483_647;

export interface PageWindow {
  page: number;
  perPage: number;
}

/** A query string's or a message's integer; undefined for anything that is not one. */
function integerOf(raw: string | number | null | undefined): number | undefined {
  if (typeof raw === "number") return Number.isInteger(raw) ? raw : undefined;
  if (typeof raw !== "string" || !/^[+-]?[0-9]+$/.test(raw.trim())) return undefined;
  return Number(raw.trim());
}

export function pageWindow(page: string | number | null | undefined, perPage: string | number | null | undefined): PageWindow {
  const p = integerOf(page);
  const pp = integerOf(perPage);
  return {
    page: p === undefined || p < 1 ? 1 : Math.min(p, MAX_PAGE),
    perPage: pp === undefined || pp < 1 ? DEFAULT_PER_PAGE : Math.min(pp, MAX_PER_PAGE),
  };
}

/** A page's meta as both lists answer it; last_page is 1 for an empty list. */
export const pageMeta = ({ page, perPage }: PageWindow, total: number) => ({
  current_page: page,
  last_page: Math.max(1, Math.ceil(total / perPage)),
  per_page: perPage,
  total,
});
