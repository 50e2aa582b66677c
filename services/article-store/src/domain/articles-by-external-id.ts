// Many articles read by external_id in one statement, for callers that handle many at once
// (webhook-dispatcher reads the articles of all the deliveries it has in flight together).
import { sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { preparedPerDatabase } from "../db/prepared.ts";
import { articles } from "../db/schema.ts";
import { invalidFields } from "../../../kit/src/errors.ts";
import { isUuid, type ArticleRecord } from "./articles.ts";

export const MAX_EXTERNAL_IDS = 500;

// The identifiers are bound as one array, so the statement is prepared once for any number.
const statements = preparedPerDatabase((db) => ({
  byExternalIds: db
    .select()
    .from(articles)
    .where(sql`${articles.externalId} = any(${sql.placeholder("externalIds")}::uuid[])`)
    .prepare("articles_by_external_ids"),
}));

/** The articles with these external_ids; unknown ones, and ones that are not UUIDs, are left out. */
export async function getArticlesByExternalId(db: Db, externalIds: readonly string[]): Promise<ArticleRecord[]> {
  if (externalIds.length > MAX_EXTERNAL_IDS) throw invalidFields({ external_ids: [`At most ${MAX_EXTERNAL_IDS} identifiers per call.`] });
  const wanted = [...new Set(externalIds.filter(isUuid).map((id) => id.toLowerCase()))];
  return wanted.length === 0 ? [] : statements(db).byExternalIds.execute({ externalIds: wanted });
}
