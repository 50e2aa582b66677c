// A client's cancel reaching the run: article-store fails the article (its reason names the
// cancel) and announces it on a Redis channel; the runner working on it aborts the running model
// call through the run's AbortSignal and starts nothing more. An article cancelled while its job
// waited is found at pickup. Either way the run then settles the words of the steps it finished
// (the latest finished step's output, counted as a completion counts its content) or, with none
// finished, gives the whole reservation back; no webhook is sent for a failed article.
import type { RedisConnection } from "../../../kit/src/redis.ts";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { ArticleStoreService } from "../../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import type { QuotaService } from "../../../../proto/gen/articles/accounts_billing/v1/quota_pb.ts";
import { articleCancelsChannel, isCancelledArticle } from "../../../kit/src/article-events.ts";
import type { Logger } from "../../../kit/src/logger.ts";
import type { Db } from "../db/client.ts";
import { stepCheckpointsOf } from "./checkpoints.ts";
import { wordCountOf } from "./step-values.ts";

/** The run stopped because its client cancelled the article. */
export class ArticleCancelled extends Error {
  override readonly name = "ArticleCancelled";
  constructor(externalId: string) {
    super(`article ${externalId} was cancelled by its client`);
  }
}

/** The runs of this process, each abortable when its article's cancel is announced. */
export class CancelWatch {
  private readonly runs = new Map<string, AbortController>();

  constructor(
    subscriber: RedisConnection,
    redisPrefix: string,
    logger: Logger,
    /** Also told of every cancel, e.g. to wake a job parked between batch polls. */
    onCancel: (externalId: string) => void = () => {},
  ) {
    const channel = articleCancelsChannel(redisPrefix);
    subscriber.subscribe(channel).catch((error) => logger.error("could not listen for cancels", { error: (error as Error).message }));
    subscriber.on("message", (from: string, externalId: string) => {
      if (from !== channel) return;
      this.runs.get(externalId)?.abort(new ArticleCancelled(externalId));
      onCancel(externalId);
    });
  }

  /** The signal of one run of the article; `done` forgets it. */
  watch(externalId: string): { signal: AbortSignal; done(): void } {
    const controller = new AbortController();
    this.runs.set(externalId, controller);
    return { signal: controller.signal, done: () => this.runs.get(externalId) === controller && this.runs.delete(externalId) };
  }
}

/** Whether the run's error means its article was cancelled (aborted here, or refused by article-store since). */
export async function endedByCancel(articles: Client<typeof ArticleStoreService>, externalId: string, error: unknown): Promise<boolean> {
  if (error instanceof ArticleCancelled) return true;
  if (!(error instanceof ConnectError) || error.code !== Code.FailedPrecondition) return false;
  const found = await articles.getArticle({ identifier: externalId }).catch(() => undefined);
  return !!found?.article && isCancelledArticle(found.article);
}

/** Settles the finished steps' words of a cancelled run, or releases the reservation when none finished. Idempotent. */
export async function settleCancelledRun(db: Db, quota: Client<typeof QuotaService>, externalId: string): Promise<number> {
  const finished = [...(await stepCheckpointsOf(db, externalId)).values()];
  const latest = finished.sort((a, b) => b.stepNumber - a.stepNumber)[0];
  if (!latest) {
    await quota.releaseWords({ reference: externalId });
    return 0;
  }
  const words = wordCountOf(latest.output);
  await quota.settleWords({ reference: externalId, actualWords: BigInt(words) });
  return words;
}
