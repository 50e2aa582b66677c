// Reading articles (spec 4.2, 4.3): the identifier in the path and the list query. The list
// answers 200, 401, 402 or 429 and nothing else (4.2), so no query value of the spec's is refused
// (the cursor, an addition of this API, is: a 422 on `cursor`, list-cursor.ts): a status
// that is not one of the spec's, or a project_id the caller cannot see, matches nothing, and the
// page window is clamped (services/kit/src/rules/page-window.ts).
import { pageWindow, type PageWindow } from "../../../services/kit/src/rules/page-window.ts";
import { numericId } from "../../../services/kit/src/rules/identifiers.ts";
import type { QueryValues } from "../validation.ts";
import { pageQueryFields, type FieldTable } from "../openapi/fields.ts";
import { ARTICLE_STATUSES } from "../../../services/kit/src/rules/article-statuses.ts";


/** The list query, once: the OpenAPI document takes its parameters from here. */
export const ARTICLE_LIST_QUERY = {
  status: { type: "string", enum: ARTICLE_STATUSES, description: "Only articles in this status (an exact match); any other value matches no article." },
  project_id: {
    type: "integer",
    description: "Only this project's articles; without it every project the caller can view. A project the caller cannot view (of another account, or not a number) matches no article.",
  },
  ...pageQueryFields("Articles"),
  cursor: {
    type: "string",
    description:
      "Keyset paging: the `meta.next_cursor` of the page before, to read the page after it in the time of a first page at any depth (`page` is then not read; per_page is). Refused with 422 on `cursor` when it is not one this list gave (malformed, or given for another status, project_id or account).",
  },
} as const satisfies FieldTable;

export interface ArticleListQuery extends PageWindow {
  status?: string;
  /** The one project asked for; 0 when project_id named none a caller could have (every project's id is at least 1). */
  projectId?: number;
  /** A status outside the spec's values: the page is empty whatever else is asked. */
  unknownStatus: boolean;
  /** The cursor asked for (list-cursor.ts), as given; an empty one is none, null one that did not decode (refused, not taken for none). */
  cursor?: string | null;
}

const isArticleStatus = (value: string | null): boolean => (ARTICLE_STATUSES as readonly (string | null)[]).includes(value);

/** GET /v1/articles and ListArticles: status, project_id, page, per_page, cursor (an undecodable value is null). */
export function listQueryOf(query: QueryValues): ArticleListQuery {
  const { status, project_id: project, cursor } = query;
  const statusGiven = status !== undefined && status !== "";
  return {
    status: (statusGiven && status) || undefined,
    unknownStatus: statusGiven && !isArticleStatus(status),
    projectId: project === undefined || project === "" ? undefined : (project !== null && numericId(project)) || 0,
    ...pageWindow(query.page, query.per_page),
    cursor: cursor === "" ? undefined : cursor,
  };
}
