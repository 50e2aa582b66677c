// Reading articles (spec 4.2, 4.3): the identifier in the path and the list query.
import { queryInteger, Validator } from "../validation.ts";

export const ARTICLE_STATUSES = ["queued", "batching", "writing", "polishing", "completed", "published", "failed"] as const;
export const MAX_PER_PAGE = 100;
const INT32_MAX = 2_147_483_647;

const NUMERIC_ID = /^[1-9][0-9]{0,15}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A numeric id or an external_id UUID; anything else is answered 404 without a lookup. */
export const isArticleIdentifier = (value: string) => (NUMERIC_ID.test(value) && Number.isSafeInteger(Number(value))) || UUID.test(value);

export interface ArticleListQuery {
  status?: string;
  projectId?: number;
  page: number;
  perPage: number;
}

/** GET /v1/articles: status, project_id, page, per_page (default 20, at most 100). */
export function listQueryOf(query: Record<string, string | undefined>): ArticleListQuery {
  const v = new Validator({});
  const status = query.status === undefined || query.status === "" ? undefined : query.status;
  if (status !== undefined && !(ARTICLE_STATUSES as readonly string[]).includes(status)) {
    v.fail("status", `The selected status is invalid. Allowed: ${ARTICLE_STATUSES.join(", ")}.`);
  }
  const projectId = queryInteger(v, query, "project_id", { min: 1, max: Number.MAX_SAFE_INTEGER });
  const page = queryInteger(v, query, "page", { min: 1, max: INT32_MAX, fallback: 1 })!;
  const perPage = queryInteger(v, query, "per_page", { min: 1, max: MAX_PER_PAGE, fallback: 20 })!;
  v.check();
  return { status, projectId, page, perPage };
}
