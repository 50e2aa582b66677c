// The research sources an article's run used. A retried run records its own set, which
// replaces the previous one, so recording is idempotent.
import { asc, eq } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { researchSources } from "../db/schema.ts";
import { throwIfAny } from "../../../kit/src/errors.ts";
import { getArticleByExternalId } from "./articles.ts";
import { onArticle, refuseFailed } from "./lifecycle.ts";

export interface ResearchSource {
  position: number;
  title: string;
  url: string;
  wordCount: number;
  fetchedAt: Date;
}

function checkSources(sources: ResearchSource[]): void {
  const errors: Record<string, string[]> = {};
  const positions = new Set<number>();
  sources.forEach((s, i) => {
    if (!Number.isInteger(s.position) || s.position < 1 || positions.has(s.position)) errors[`sources.${i}.position`] = ["position must be a distinct integer from 1."];
    if (s.url.trim() === "") errors[`sources.${i}.url`] = ["url is required."];
    if (!Number.isInteger(s.wordCount) || s.wordCount < 0) errors[`sources.${i}.word_count`] = ["word_count must be a non-negative integer."];
    positions.add(s.position);
  });
  throwIfAny(errors);
}

export async function recordResearchSources(db: Db, externalId: string, sources: ResearchSource[]): Promise<void> {
  checkSources(sources);
  await onArticle(db, externalId, async (tx, article) => {
    refuseFailed(article);
    await tx.delete(researchSources).where(eq(researchSources.articleId, article.id));
    if (sources.length) await tx.insert(researchSources).values(sources.map((s) => ({ ...s, articleId: article.id })));
  });
}

export async function listResearchSources(db: Db, externalId: string): Promise<ResearchSource[]> {
  const article = await getArticleByExternalId(db, externalId);
  return db
    .select({ position: researchSources.position, title: researchSources.title, url: researchSources.url, wordCount: researchSources.wordCount, fetchedAt: researchSources.fetchedAt })
    .from(researchSources)
    .where(eq(researchSources.articleId, article.id))
    .orderBy(asc(researchSources.position));
}
