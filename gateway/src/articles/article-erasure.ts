// DELETE /v1/articles/{id} (and articles.api.v1 DeleteArticle): the article and its data erased
// from every service (services/kit/src/article-erasure-steps.ts), an erasure record without
// content kept for billing. Needs update access; a repeat answers as the first did, to a caller
// who may change the article's former project. A run or delivery that does not stop in time is 409.
// Posts on WordPress or Ghost stay unless `unpublish=true` asks for their removal too.
import { Code, ConnectError } from "@connectrpc/connect";
import { HttpError, notFoundError, validationError } from "../errors.ts";
import type { Caller, V1Gate } from "../plugins/caller.ts";
import { articleIdentifier, canonicalIdentifier } from "../../../services/kit/src/rules/identifiers.ts";
import { eraseArticleEverywhere, PostsNotRemoved } from "../../../services/kit/src/article-erasure-steps.ts";
import type { ArticleWithProject } from "./article-with-project.ts";

export const ERASED_MESSAGE = "Article deleted: its content, versions, events, sources, images and queued deliveries were erased.";

/** `unpublish` of the query: posts on WordPress or Ghost stay unless it is true. */
export function unpublishOf(value: string | null | undefined): boolean {
  if (value === undefined || value === null || value === "" || value === "false") return false;
  if (value === "true") return true;
  throw validationError({ unpublish: ["The unpublish field must be true or false."] });
}

export class ArticleErasure {
  constructor(
    private readonly gate: V1Gate,
    private readonly find: (caller: Caller, identifier: string, access: "view" | "update") => Promise<ArticleWithProject>,
  ) {}

  /** With `unpublish`, the article's posts on WordPress and Ghost are deleted first; a site that fails is 502 and nothing is erased. */
  async erase(caller: Caller, identifier: string, unpublish = false): Promise<void> {
    let found: ArticleWithProject;
    try {
      found = await this.find(caller, identifier, "update");
    } catch (error) {
      if (error instanceof HttpError && error.status === 404) return this.repeated(caller, identifier, error);
      throw error;
    }
    try {
      await eraseArticleEverywhere(this.gate.clients, found.article, caller.keyId, { unpublish });
    } catch (error) {
      if (error instanceof PostsNotRemoved) throw new HttpError(502, { message: error.message });
      if (error instanceof ConnectError && error.code === Code.Aborted) {
        throw new HttpError(409, { message: "The article's run or delivery is still stopping; delete it again in a moment.", current_version_id: null, status: null });
      }
      throw error;
    }
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
}
