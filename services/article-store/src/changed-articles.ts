// The articles a lifecycle call changed, as the interceptors that announce changes and log the
// ends of articles see them: the article the call answers, or for RecordDeliveries, which answers
// only what became of each record, the articles its handler hands over in the call's context.
import { createContextKey, type ContextValues } from "@connectrpc/connect";
import type { Article } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";

/** Partial records: ids, status, cost and delivery marks (rpc.ts, deliveredArticleMessage), not the content. */
export interface MarkedByDeliveries {
  published: Article[];
  deliveryFailed: Article[];
}

export const markedByDeliveries = createContextKey<MarkedByDeliveries>({ published: [], deliveryFailed: [] }, { description: "articles RecordDeliveries marked" });

/** Every article the call changed. */
export function changedArticles(answer: unknown, values: ContextValues): Article[] {
  const { article } = answer as { article?: Article };
  if (article) return [article];
  const { published, deliveryFailed } = values.get(markedByDeliveries);
  return [...published, ...deliveryFailed];
}

/** The articles the call may have ended: the one it answers, or those RecordDeliveries published. */
export function endedArticles(answer: unknown, values: ContextValues): Article[] {
  const { article } = answer as { article?: Article };
  return article ? [article] : values.get(markedByDeliveries).published;
}
