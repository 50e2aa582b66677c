// The article each run starts by reading, read together: under load many runs start in the same
// turn of the event loop, and one BatchGetArticlesByExternalId answers them all (kit/call-batches)
// instead of a call each. An article the store does not know is answered as undefined.
import type { Client } from "@connectrpc/connect";
import type { Article, ArticleStoreService } from "../../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { CallBatches } from "../../../kit/src/call-batches.ts";

/** At most this many identifiers per call (the method's own limit). */
const MOST_PER_CALL = 500;

export function articleReader(articles: Client<typeof ArticleStoreService>): (externalId: string) => Promise<Article | undefined> {
  const reads = new CallBatches<string, Article | undefined>(
    async (externalIds) => {
      const found = new Map((await articles.batchGetArticlesByExternalId({ externalIds })).articles.map((a) => [a.externalId.toLowerCase(), a]));
      return externalIds.map((id) => found.get(id.toLowerCase()));
    },
    { maxSize: MOST_PER_CALL, maxRunning: 2 },
  );
  return (externalId) => reads.ask(externalId);
}
