// POST /v1/articles/{id}/cancel: article-store decides on the locked article (a completion racing
// the cancel either committed first, and the cancel is 422, or finds the article failed) and
// tells the runner, which stops the running model call and settles the finished steps' words.
// Cancelling a cancelled article answers 200 again with the same article; on a completed or
// published article it stops the section revision under way (the article unchanged); any other
// ended article is 422.
import type { Client } from "@connectrpc/connect";
import type { ArticleLifecycleService, Article } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";

export const CANCELLED_MESSAGE = "Article cancelled: generation stopped and the words of unfinished steps were given back.";
export const REVISION_CANCELLED_MESSAGE = "Section revision cancelled: its run stopped and its held words were given back; the article is unchanged.";

export async function cancelArticle(lifecycle: Client<typeof ArticleLifecycleService>, article: Article): Promise<Article> {
  return (await lifecycle.cancelArticle({ externalId: article.externalId })).article!;
}
