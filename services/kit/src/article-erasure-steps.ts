// The steps of erasing an article across the services, once for the gateway (DELETE
// /v1/articles/{id}, after its access checks) and the operator CLI (`article erase`, on request).
// Each step is safe to repeat, and article-store's rows go last, so an erasure that failed half-way
// leaves the article readable and is simply run again: a running article is cancelled and its run
// left to stop; the dispatcher's queued deliveries and messages go; the runner's run, checkpoints,
// research and images (their files too), and when asked the posts on WordPress or Ghost; the ledger gives back what is still reserved and keeps
// the billed words under a reference that no longer names the article; then article-store erases
// its rows in one transaction, and Redis' copies.
import { createHash } from "node:crypto";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { ArticleErasure, ArticleErasureService } from "../../../proto/gen/articles/article_store/v1/erasure_pb.ts";
import type { ArticleLifecycleService } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import type { RunErasureService } from "../../../proto/gen/articles/generation_runner/v1/erasure_pb.ts";
import type { DeliveryErasureService } from "../../../proto/gen/articles/webhook_dispatcher/v1/erasure_pb.ts";
import type { ReservationErasureService } from "../../../proto/gen/articles/accounts_billing/v1/erasure_pb.ts";

export interface ErasureClients {
  lifecycle: Client<typeof ArticleLifecycleService>;
  erasure: Client<typeof ArticleErasureService>;
  runErasure: Client<typeof RunErasureService>;
  deliveryErasure: Client<typeof DeliveryErasureService>;
  reservationErasure: Client<typeof ReservationErasureService>;
}

export interface ErasedArticle {
  id: bigint;
  externalId: string;
  status: string;
  projectId: bigint;
  /** Where it was published: the posts `unpublish` removes. */
  publications: { destinationId: bigint; remoteId?: string }[];
}

/** A site the article was published to could not delete its post: nothing was erased. */
export class PostsNotRemoved extends Error {
  override readonly name = "PostsNotRemoved";
}

const RUNNING = ["queued", "batching", "writing", "polishing"];
// A cancelled run stops at its next check (a running model call is aborted at once); a delivery
// under way ends within its timeout. The erasure waits this long for them, then gives up ABORTED.
const STOPPING_WAIT_MS = 20_000;
const STOPPING_POLL_MS = 250;

/** The ledger reference an erased article's reservation is kept under: no trace of its id. */
const erasedReference = (article: ErasedArticle) => `erased-article-${article.id}-${createHash("sha256").update(article.externalId).digest("hex").slice(0, 16)}`;

/** A step refused while the article's run or delivery is still stopping, asked again until it is not. */
async function untilStopped<T>(step: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + STOPPING_WAIT_MS;
  for (;;) {
    try {
      return await step();
    } catch (error) {
      if (!(error instanceof ConnectError && error.code === Code.Aborted) || Date.now() > deadline) throw error;
      await Bun.sleep(STOPPING_POLL_MS);
    }
  }
}

/**
 * Erases the article everywhere; `keyId` is the API key asking (0: the operator, or a workload).
 * With `unpublish`, its posts on WordPress and Ghost are deleted first of all (after its queued
 * publications are gone, so none makes a post again), and a site that fails stops the erasure.
 */
export async function eraseArticleEverywhere(clients: ErasureClients, article: ErasedArticle, keyId: number, opts: { unpublish?: boolean } = {}): Promise<ArticleErasure> {
  const { externalId } = article;
  if (RUNNING.includes(article.status)) {
    // Ended meanwhile (completed, failed): nothing to cancel, the erasure goes on.
    await clients.lifecycle.cancelArticle({ externalId }).catch((error) => {
      if (!(error instanceof ConnectError && error.code === Code.FailedPrecondition)) throw error;
    });
  }
  await untilStopped(() => clients.deliveryErasure.eraseDeliveries({ externalId }));
  if (opts.unpublish && article.publications.length > 0) {
    const posts = article.publications.map((p) => ({ destinationId: p.destinationId, remoteId: p.remoteId }));
    await clients.deliveryErasure.removePosts({ externalId, projectId: article.projectId, posts }).catch((error) => {
      if (error instanceof ConnectError && error.code === Code.Unavailable && error.rawMessage.startsWith("The post on ")) throw new PostsNotRemoved(error.rawMessage);
      throw error;
    });
  }
  await untilStopped(() => clients.runErasure.eraseRun({ externalId }));
  const ledger = await clients.reservationErasure.eraseReservation({ reference: externalId, erasedReference: erasedReference(article) });
  return (await clients.erasure.eraseArticle({ externalId, wordsBilled: ledger.wordsBilled, keyId: BigInt(keyId) })).erasure!;
}
