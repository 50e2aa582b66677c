// DELETE /v1/articles/{id} (and articles.api.v1 DeleteArticle): the article and its data erased
// from every service, an erasure record without content kept for billing. Needs update access.
// The steps, each safe to repeat, in an order that leaves the article readable (and the delete
// repeatable) until its last step: a running article is cancelled and its run left to stop; the
// dispatcher's queued deliveries and messages, the runner's run, checkpoints, research and images
// (their files too) go; the ledger gives back what is still reserved and keeps the billed words
// under a reference that no longer names the article; then article-store erases its rows in one
// transaction and Redis' copies. A repeat answers as the first did.
import { createHash } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Article } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { HttpError, notFoundError, validationError } from "../errors.ts";
import type { Caller, V1Gate } from "../plugins/caller.ts";
import { articleIdentifier, canonicalIdentifier } from "../../../services/kit/src/rules/identifiers.ts";
import type { ArticleWithProject } from "./article-operations.ts";

export const ERASED_MESSAGE = "Article deleted: its content, versions, events, sources, images and queued deliveries were erased.";

const RUNNING = ["queued", "batching", "writing", "polishing"];
// A cancelled run stops at its next check (a running model call is aborted at once); a delivery
// under way ends within its timeout. The erasure waits this long for them, then asks to retry.
const STOPPING_WAIT_MS = 20_000;
const STOPPING_POLL_MS = 250;

/** The ledger reference an erased article's reservation is kept under: no trace of its id. */
const erasedReference = (article: Article) => `erased-article-${article.id}-${createHash("sha256").update(article.externalId).digest("hex").slice(0, 16)}`;

/** `unpublish` of the query: posts on WordPress or Ghost stay unless asked; removing them is not offered yet. */
export function unpublishOf(value: string | null | undefined): boolean {
  if (value === undefined || value === null || value === "" || value === "false") return false;
  if (value === "true") throw validationError({ unpublish: ["Removing published posts with the article is not available yet; delete them on the site, then the article."] });
  throw validationError({ unpublish: ["The unpublish field must be true or false."] });
}

export class ArticleErasure {
  constructor(
    private readonly gate: V1Gate,
    private readonly find: (caller: Caller, identifier: string, access: "view" | "update") => Promise<ArticleWithProject>,
  ) {}

  async erase(caller: Caller, identifier: string): Promise<void> {
    let found: ArticleWithProject;
    try {
      found = await this.find(caller, identifier, "update");
    } catch (error) {
      if (error instanceof HttpError && error.status === 404) return this.repeated(caller, identifier, error);
      throw error;
    }
    const { article } = found;
    const { clients } = this.gate;
    if (RUNNING.includes(article.status)) {
      // Ended meanwhile (completed, failed): nothing to cancel, the erasure goes on.
      await clients.lifecycle.cancelArticle({ externalId: article.externalId }).catch((error) => {
        if (!(error instanceof ConnectError && error.code === Code.FailedPrecondition)) throw error;
      });
    }
    const externalId = article.externalId;
    await this.untilStopped(() => clients.deliveryErasure.eraseDeliveries({ externalId }));
    await this.untilStopped(() => clients.runErasure.eraseRun({ externalId }));
    const ledger = await clients.reservationErasure.eraseReservation({ reference: externalId, erasedReference: erasedReference(article) });
    await clients.erasure.eraseArticle({ externalId, wordsBilled: ledger.wordsBilled, keyId: BigInt(caller.keyId) });
  }

  /** A delete of an article already erased answers as the first did, to a caller who may change its project. */
  private async repeated(caller: Caller, identifier: string, missing: HttpError): Promise<void> {
    const parsed = articleIdentifier(identifier);
    if (!parsed) throw missing;
    try {
      const { erasure } = await this.gate.clients.erasure.findErasure({ identifier: canonicalIdentifier(parsed) });
      await this.gate.projects.authorize(caller, erasure!.projectId, "update");
    } catch (error) {
      if (error instanceof ConnectError && error.code === Code.NotFound) throw notFoundError("Article not found.");
      throw error;
    }
  }

  /** A step refused while the article's run or delivery is still stopping, asked again until it is not. */
  private async untilStopped<T>(step: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + STOPPING_WAIT_MS;
    for (;;) {
      try {
        return await step();
      } catch (error) {
        if (!(error instanceof ConnectError && error.code === Code.Aborted)) throw error;
        if (Date.now() > deadline) throw new HttpError(409, { message: "The article's run or delivery is still stopping; delete it again in a moment.", current_version_id: null, status: null });
        await Bun.sleep(STOPPING_POLL_MS);
      }
    }
  }
}
