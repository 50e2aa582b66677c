// Reading articles (spec 4.2, 4.3): the identifier in the path and the list query.
import { queryInteger, queryText, Validator, type QueryValues } from "../validation.ts";
import type { FieldTable } from "../openapi/fields.ts";

export const ARTICLE_STATUSES = ["queued", "batching", "writing", "polishing", "completed", "published", "failed"] as const;
export const MAX_PER_PAGE = 100;
const INT32_MAX = 2_147_483_647;

/** The list query, once: listQueryOf reads its bounds here and the OpenAPI document its parameters. */
export const ARTICLE_LIST_QUERY = {
  status: { type: "string", enum: ARTICLE_STATUSES, description: "Only articles in this status." },
  project_id: { type: "integer", min: 1, max: Number.MAX_SAFE_INTEGER, description: "Only this project's articles; without it every project the caller can view." },
  page: { type: "integer", min: 1, max: INT32_MAX, default: 1, description: "Page from 1." },
  per_page: { type: "integer", min: 1, max: MAX_PER_PAGE, default: 20, description: "Articles per page." },
} as const satisfies FieldTable;
const Q = ARTICLE_LIST_QUERY;

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
export function listQueryOf(query: QueryValues): ArticleListQuery {
  const v = new Validator({});
  const status = queryText(v, query, "status");
  if (status !== undefined && !(Q.status.enum as readonly string[]).includes(status)) {
    v.fail("status", `The selected status is invalid. Allowed: ${Q.status.enum.join(", ")}.`);
  }
  const projectId = queryInteger(v, query, "project_id", { min: Q.project_id.min, max: Q.project_id.max });
  const page = queryInteger(v, query, "page", { min: Q.page.min, max: Q.page.max, fallback: Q.page.default })!;
  const perPage = queryInteger(v, query, "per_page", { min: Q.per_page.min, max: Q.per_page.max, fallback: Q.per_page.default })!;
  v.check();
  return { status, projectId, page, perPage };
}
