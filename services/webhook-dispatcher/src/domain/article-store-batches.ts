// The dispatcher's calls to article-store, each shared by the deliveries in flight: their articles
// read in one call (BatchGetArticlesByExternalId) and their attempts recorded, with what ended,
// in one call and one transaction (RecordDeliveries).
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { codeFromString } from "@connectrpc/connect/protocol-connect";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Article, ArticleLifecycleService, ArticleStoreService, DeliveryRecordSchema } from "../../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import { CallBatches } from "../../../kit/src/call-batches.ts";

// article-store's limit on both calls.
const MAX_PER_CALL = 500;
// One call at a time: what arrives meanwhile goes together in the next, which keeps the calls
// (and article-store's transactions) few when deliveries are many.
const LIMITS = { maxSize: MAX_PER_CALL, maxRunning: 1 };

/** The article of a delivery, or undefined when article-store has none by that id. */
export type ArticleRead = (externalId: string) => Promise<Article | undefined>;

export function batchedArticleReads(articles: Client<typeof ArticleStoreService>): ArticleRead {
  const batches = new CallBatches<string, Article | undefined>(async (externalIds) => {
    const found = (await articles.batchGetArticlesByExternalId({ externalIds })).articles;
    const byId = new Map(found.map((a) => [a.externalId.toLowerCase(), a]));
    return externalIds.map((id) => byId.get(id.toLowerCase()));
  }, LIMITS);
  return (externalId) => batches.ask(externalId);
}

export type DeliveryRecord = MessageInitShape<typeof DeliveryRecordSchema>;

/** Records one attempt (and the delivery's end, if it ended); fails as RecordDeliveryAttempt would. */
export type RecordDelivery = (record: DeliveryRecord) => Promise<void>;

export function batchedDeliveryRecords(lifecycle: Client<typeof ArticleLifecycleService>): RecordDelivery {
  const batches = new CallBatches<DeliveryRecord, void>(async (records) => {
    const { results } = await lifecycle.recordDeliveries({ records });
    if (results.length !== records.length) throw new Error(`article-store answered ${results.length} results for ${records.length} delivery records`);
    return results.map(({ error }) => (error ? new ConnectError(error.message, codeFromString(error.code) ?? Code.Unknown) : undefined));
  }, LIMITS);
  return (record) => batches.ask(record);
}
