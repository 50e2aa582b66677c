// Erasing an article: every row that holds it (its events, delivery attempts, research sources,
// idempotency claims, outbox rows, section revisions, versions and the article itself) goes in one transaction on the
// locked row, and an erasure record without content stays. The record keeps a SHA-256 of the
// external_id, never the id itself, so a repeated delete is recognised and answered the same.
import { createHash } from "node:crypto";
import { and, eq, or, sql } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { articleErasures, articleEvents, articleFailures, articleVersions, articles, deliveryAttempts, idempotencyKeys, outbox, researchSources, sectionRevisions } from "../db/schema.ts";
import { notFound, precondition, stale } from "../../../kit/src/errors.ts";
import { articleIdentifier } from "../../../kit/src/rules/identifiers.ts";
import { isDone } from "./lifecycle.ts";
import { revisionUnderWay } from "./section-revisions.ts";

export type ErasureRecord = typeof articleErasures.$inferSelect;

const sha256 = (externalId: string) => createHash("sha256").update(externalId.toLowerCase()).digest("hex");

/** The erasure of an article by its former numeric id or external_id, if it was erased. */
export async function findErasure(db: Db, identifier: string): Promise<ErasureRecord | undefined> {
  const parsed = articleIdentifier(identifier.trim());
  if (!parsed) return undefined;
  const where = "id" in parsed ? eq(articleErasures.articleId, Number(parsed.id)) : eq(articleErasures.externalIdSha256, sha256(parsed.externalId));
  const [erasure] = await db.select().from(articleErasures).where(where);
  return erasure;
}

export async function eraseArticle(db: Db, externalId: string, wordsBilled: number, keyId: number): Promise<ErasureRecord> {
  const erased = await db.transaction(async (t) => {
    const tx = t as unknown as Db;
    const [article] = await tx.select().from(articles).where(eq(articles.externalId, externalId.toLowerCase())).for("update");
    if (!article) return undefined;
    if (!isDone(article.status) && article.status !== "failed") throw precondition(`The article is ${article.status}; cancel it before erasing it.`);
    // A section revision's run holds words under its own reference: it ends first (ABORTED: ask again).
    if ((await revisionUnderWay(tx, article.id)) !== undefined) throw stale("A section revision of the article is still under way; delete it again once it has ended.");
    await tx.delete(articleEvents).where(eq(articleEvents.articleId, article.id));
    await tx.delete(deliveryAttempts).where(eq(deliveryAttempts.articleId, article.id));
    await tx.delete(researchSources).where(eq(researchSources.articleId, article.id));
    await tx.delete(idempotencyKeys).where(or(eq(idempotencyKeys.articleId, article.id), eq(idempotencyKeys.externalId, article.externalId)));
    await tx.delete(outbox).where(eq(outbox.articleId, article.id));
    // Its section revisions' words were settled under references of their own: the record bills them too.
    const [{ revised }] = await tx.select({ revised: sql<number>`coalesce(sum(${sectionRevisions.writtenWords}), 0)::int` }).from(sectionRevisions).where(and(eq(sectionRevisions.articleId, article.id), eq(sectionRevisions.status, "completed")));
    await tx.delete(sectionRevisions).where(eq(sectionRevisions.articleId, article.id));
    await tx.delete(articleVersions).where(eq(articleVersions.articleId, article.id));
    await tx.delete(articleFailures).where(eq(articleFailures.articleId, article.id));
    await tx.delete(articles).where(eq(articles.id, article.id));
    const [record] = await tx
      .insert(articleErasures)
      .values({ articleId: article.id, externalIdSha256: sha256(article.externalId), accountId: article.accountId, projectId: article.projectId, wordsBilled: wordsBilled + revised, erasedByKeyId: keyId > 0 ? keyId : null })
      .returning();
    return record;
  });
  if (erased) return erased;
  // Erased already (a repeat), or never there.
  const earlier = await findErasure(db, externalId);
  if (!earlier) throw notFound("No such article.");
  return earlier;
}
