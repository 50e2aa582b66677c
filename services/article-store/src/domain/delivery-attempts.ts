// The delivery log of an article's completion webhook: one row per attempt, keyed by
// (delivery, attempt) so a retried recording adds nothing.
import { asc, eq } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { deliveryAttempts } from "../db/schema.ts";
import { throwIfAny } from "../../../kit/src/errors.ts";
import { getArticleByExternalId } from "./articles.ts";
import { onArticle, refuseFailed } from "./lifecycle.ts";

export interface DeliveryAttempt {
  deliveryId: string;
  attempt: number;
  attemptedAt: Date;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  succeeded: boolean;
  versionId: number;
}

export function checkAttempt(a: DeliveryAttempt): void {
  const errors: Record<string, string[]> = {};
  if (a.deliveryId.trim() === "") errors.delivery_id = ["delivery_id is required."];
  if (!Number.isInteger(a.attempt) || a.attempt < 1) errors.attempt = ["attempt must be an integer from 1."];
  if (!Number.isInteger(a.durationMs) || a.durationMs < 0) errors.duration_ms = ["duration_ms must be a non-negative integer."];
  throwIfAny(errors);
}

export async function recordDeliveryAttempt(db: Db, externalId: string, attempt: DeliveryAttempt): Promise<void> {
  checkAttempt(attempt);
  await onArticle(db, externalId, async (tx, article) => {
    refuseFailed(article);
    await tx
      .insert(deliveryAttempts)
      .values({ ...attempt, articleId: article.id })
      .onConflictDoNothing({ target: [deliveryAttempts.articleId, deliveryAttempts.deliveryId, deliveryAttempts.attempt] });
  });
}

export async function listDeliveryAttempts(db: Db, externalId: string): Promise<DeliveryAttempt[]> {
  const article = await getArticleByExternalId(db, externalId);
  const rows = await db.select().from(deliveryAttempts).where(eq(deliveryAttempts.articleId, article.id)).orderBy(asc(deliveryAttempts.attemptedAt), asc(deliveryAttempts.id));
  return rows.map(({ id: _id, articleId: _article, ...attempt }) => attempt);
}
