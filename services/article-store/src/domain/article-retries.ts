// Retrying a failed article: on the locked row, its failure (reason, step) goes into its history
// (article_failures), it returns to queued with everything else as it was (ids, settings, the
// pinned workflow revision), and an outbox row queues its generation job again in the same
// transaction. The run resumes from its checkpoints: the runner keeps them per article.
import { eq, max } from "drizzle-orm";
import type { Db } from "../db/client.ts";
import { articleFailures, outbox } from "../db/schema.ts";
import { precondition } from "../../../kit/src/errors.ts";
import { updateArticle, type ArticleRecord } from "./articles.ts";
import { onArticle } from "./lifecycle.ts";

export interface RetriedArticle {
  article: ArticleRecord;
  attempt: number;
  previousReason: string | null;
  previousStep: string | null;
}

export async function retryArticle(db: Db, externalId: string, stoppedAtStep?: string): Promise<RetriedArticle> {
  return onArticle(db, externalId, async (tx, article) => {
    if (article.status !== "failed") throw precondition(`The article is ${article.status}; only a failed article can be retried.`);
    // The runner's checkpoints know best: the article's current_step comes from progress reports, which may lag a step.
    const step = stoppedAtStep ?? article.failedStep ?? null;
    const [{ last }] = await tx.select({ last: max(articleFailures.attempt) }).from(articleFailures).where(eq(articleFailures.articleId, article.id));
    const attempt = (last ?? 0) + 1;
    await tx.insert(articleFailures).values({ articleId: article.id, attempt, reason: article.failureReason, step, failedAt: article.updatedAt });
    const queued = await updateArticle(tx, article.id, { status: "queued", failureReason: null, failedStep: null, currentStep: null });
    await tx.insert(outbox).values({ articleId: article.id, externalId: article.externalId, queue: "generation" });
    return { article: queued, attempt, previousReason: article.failureReason, previousStep: step };
  });
}
