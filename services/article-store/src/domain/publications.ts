// An article's publications to its project's destinations, as webhook-dispatcher's publishing jobs
// record them: one record per destination (a re-publish replaces it), its attempts appended and
// capped. Recorded on the locked article row, like every lifecycle change; the publication that
// completes the configured handover also marks the article published.
import { precondition, throwIfAny } from "../../../kit/src/errors.ts";
import type { Db } from "../db/client.ts";
import { PUBLICATION_STATES, type Publication, type PublicationAttempt } from "../db/schema.ts";
import { updateArticle, type ArticleRecord } from "./articles.ts";
import { isDone, markPublishedIn, onArticle, refuseFailed } from "./lifecycle.ts";

/** Attempts kept per publication: enough to see a retry history, bounded for a job retried for days. */
export const KEPT_ATTEMPTS = 20;

export interface PublicationChange {
  publication: Omit<Publication, "attempts">;
  attempt?: PublicationAttempt;
  markPublished: boolean;
}

function check(change: PublicationChange): void {
  const { publication: p, attempt } = change;
  const errors: Record<string, string[]> = {};
  if (!Number.isSafeInteger(p.destinationId) || p.destinationId <= 0) errors["publication.destination_id"] = ["destination_id must be a positive integer."];
  if (!(PUBLICATION_STATES as readonly string[]).includes(p.state)) errors["publication.state"] = [`state must be one of ${PUBLICATION_STATES.join(", ")}.`];
  if (change.markPublished && p.versionId === null) errors["publication.version_id"] = ["version_id is required to mark the article published."];
  if (attempt && (!Number.isInteger(attempt.attempt) || attempt.attempt < 1)) errors["attempt.attempt"] = ["attempt must be 1 or more."];
  throwIfAny(errors);
}

/** The article's publications with `change` applied: its destination's record replaced, or added last. */
export function withPublication(current: readonly Publication[], change: PublicationChange): Publication[] {
  const before = current.find((p) => p.destinationId === change.publication.destinationId);
  // A new request (queued) starts a new attempt history; later states add to it.
  const history = change.publication.state === "queued" ? [] : (before?.attempts ?? []);
  const attempts = change.attempt ? [...history, change.attempt].slice(-KEPT_ATTEMPTS) : history;
  const next: Publication = { ...change.publication, attempts };
  return before ? current.map((p) => (p === before ? next : p)) : [...current, next];
}

export async function recordPublication(db: Db, externalId: string, change: PublicationChange): Promise<ArticleRecord> {
  check(change);
  return onArticle(db, externalId, async (tx, article) => {
    refuseFailed(article);
    if (!isDone(article.status)) throw precondition(`The article is ${article.status}; it can be published once completed.`);
    const updated = await updateArticle(tx, article.id, { publications: withPublication(article.publications, change) });
    return change.markPublished ? markPublishedIn(tx, updated, change.publication.versionId!) : updated;
  });
}
