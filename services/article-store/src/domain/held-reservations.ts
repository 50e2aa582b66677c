// Word reservations held in accounts-billing, as the reconciler sees them: the gateway reserves an
// article's words under the article's external_id and then creates the article here. A held
// reservation with no article of that external_id is one whose creation died half-way (its
// process killed between the two calls); one whose article exists is the run's to settle.
import { inArray } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { articles } from "../db/schema.ts";
import { isUuid } from "../../../kit/src/rules/identifiers.ts";

/**
 * The references among `references` that name no article here, in their order. Only UUIDs are
 * articles' references: any other reference is some other caller's, not this store's to judge,
 * and is left out. One read of the external_id unique index, external_ids alone.
 */
export async function referencesWithoutArticle(db: Db, references: readonly string[]): Promise<string[]> {
  const candidates = references.filter(isUuid);
  if (candidates.length === 0) return [];
  const found = await db
    .select({ externalId: articles.externalId })
    .from(articles)
    .where(inArray(articles.externalId, [...new Set(candidates.map((r) => r.toLowerCase()))]));
  const existing = new Set(found.map((row) => row.externalId.toLowerCase()));
  return candidates.filter((reference) => !existing.has(reference.toLowerCase()));
}
