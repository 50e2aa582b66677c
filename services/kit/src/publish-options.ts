// Publish options (article_store.v1 PublishOptions) as a publishing job carries them: plain JSON,
// times as ISO 8601, unset as null. Made by whoever queues a publication (webhook-dispatcher for a
// publish request, generation-runner when an article created with `publish` completes).
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { PublishOptions } from "../../../proto/gen/articles/article_store/v1/articles_pb.ts";
import type { PublishOptionsRecord } from "./queues.ts";

export const publishOptionsRecord = (o: PublishOptions | undefined): PublishOptionsRecord => ({
  status: o?.status ?? null,
  publishAt: o?.publishAt ? timestampDate(o.publishAt).toISOString() : null,
  categories: o?.categories ? o.categories.names : null,
  tags: o?.tags ? o.tags.names : null,
  slug: o?.slug ?? null,
});
