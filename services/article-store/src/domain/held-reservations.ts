// Word reservations held in accounts-billing, as the reconciler sees them: the gateway reserves an
// article's words under the article's external_id and then creates the article here, and a section
// revision's under the revision's own reference and then records the revision. A held reservation
// with neither is one whose creation died half-way (its process killed between the two calls); one
// whose article or revision exists is the run's to settle.
import { inArray } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { articles, sectionRevisions } from "../db/schema.ts";
import { isUuid } from "../../../kit/src/rules/identifiers.ts";

/**
 * The references among `references` that name no article or section revision here, in their
 * order. Only UUIDs are their references: any other reference is some other caller's, not this
 * store's to judge, and is left out. One read of each unique index, the keys alone.
 */
export async function referencesWithoutArticle(db: Db, references: readonly string[]): Promise<string[]> {
  const candidates = references.filter(isUuid);
  if (candidates.length === 0) return [];
  const found = await db
    .select({ externalId: articles.externalId })
    .from(articles)
    .where(inArray(articles.externalId, [...new Set(candidates.map((r) => r.toLowerCase()))]));
  const revisions = await db.select({ reference: sectionRevisions.reference }).from(sectionRevisions).where(inArray(sectionRevisions.reference, [...new Set(candidates)]));
  const existing = new Set([...found.map((row) => row.externalId), ...revisions.map((row) => row.reference)].map((key) => key.toLowerCase()));
  return candidates.filter((reference) => !existing.has(reference.toLowerCase()));
}
