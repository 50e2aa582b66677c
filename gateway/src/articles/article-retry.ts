// POST /v1/articles/{id}/retry (and articles.api.v1 RetryArticle): a failed article (a cancelled
// one included) goes back to queued and resumes on the workflow revision it started with, from
// the step that failed: the runner keeps each finished step's checkpoint and neither calls nor
// bills it again. Its words are held again first (the same reservation, so the retried run's
// settlement replaces what the failed run settled and nothing is billed twice); should article-
// store then refuse, the hold is given back. Needs update access.
import { Code, ConnectError } from "@connectrpc/connect";
import { HttpError } from "../errors.ts";
import type { Caller, V1Gate } from "../plugins/caller.ts";
import type { ArticleWithProject } from "./article-with-project.ts";

export interface RetriedArticle extends ArticleWithProject {
  attempt: number;
  previousReason: string | null;
  previousStep: string | null;
}

export const retriedMessage = (r: Pick<RetriedArticle, "previousStep">) =>
  `Article queued again: generation resumes ${r.previousStep ? `at "${r.previousStep}"` : "where it stopped"}, finished steps are not run or billed again.`;

export class ArticleRetry {
  constructor(
    private readonly gate: V1Gate,
    private readonly find: (caller: Caller, identifier: string, access: "view" | "update") => Promise<ArticleWithProject>,
  ) {}

  async retry(caller: Caller, identifier: string): Promise<RetriedArticle> {
    const { article, project } = await this.find(caller, identifier, "update");
    const { clients } = this.gate;
    if (article.status !== "failed") throw new HttpError(409, { message: `The article is ${article.status}; only a failed article can be retried.`, current_version_id: article.currentVersionId === undefined ? null : Number(article.currentVersionId), status: article.status });
    const reference = article.externalId;
    // The step it stopped at: the first the runner started and did not finish.
    const breakdown = await clients.costs.getCostBreakdown({ externalId: article.externalId }).catch(() => undefined);
    const stoppedAtStep = breakdown?.steps.find((s) => !s.finishedAt)?.stepName;
    await clients.reservationRetry.reserveAgain({ accountId: article.accountId, reference, words: article.settings!.reservedWords });
    try {
      const retried = await clients.retries.retryArticle({ externalId: article.externalId, stoppedAtStep });
      return { article: retried.article!, project, attempt: retried.attempt, previousReason: retried.previousReason ?? null, previousStep: retried.previousStep ?? null };
    } catch (error) {
      // Not retried after all (another retry came first, say): the words go back, unless that retry holds them.
      const current = await clients.articles.getArticle({ identifier: reference }).catch(() => undefined);
      if (current?.article?.status === "failed") await clients.quota.releaseWords({ reference }).catch(() => {});
      if (error instanceof ConnectError && error.code === Code.FailedPrecondition && current?.article) {
        throw new HttpError(409, { message: error.rawMessage, current_version_id: null, status: current.article.status });
      }
      throw error;
    }
  }
}
