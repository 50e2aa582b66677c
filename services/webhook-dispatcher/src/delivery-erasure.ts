// DeliveryErasureService: what the dispatcher keeps of an erased article. Its webhook and
// publishing jobs still queued go (a running one answers ABORTED: the gateway asks again once it
// ended), the queues' event streams forget them, then its frozen completion messages and its
// events' deliveries to the project's webhook endpoints are deleted.
// Asked to (unpublish=true), it first deletes the posts the article's publications made, through
// the same site clients that made them; a site that fails stops the erasure (UNAVAILABLE), so the
// article stays readable and the delete can simply be sent again.
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import type { Queue } from "bullmq";
import { eq } from "drizzle-orm";
import type { DeliveryErasureService } from "../../../proto/gen/articles/webhook_dispatcher/v1/erasure_pb.ts";
import { invalidFields } from "../../kit/src/errors.ts";
import { forgetJobs } from "../../kit/src/queue-erasure.ts";
import type { PublishingJob, WebhookJob } from "../../kit/src/queues.ts";
import type { RedisConnection } from "../../kit/src/redis.ts";
import { isUuid } from "../../kit/src/rules/identifiers.ts";
import type { Db } from "./db/client.ts";
import { messages } from "./db/schema.ts";
import { eraseArticleDeliveries } from "./domain/endpoint-deliveries.ts";
import { DomainError } from "../../kit/src/errors.ts";
import { openDestination } from "./domain/destinations.ts";
import { isPublishFailure, publisherFor } from "./publishing/publishers.ts";

/** What deleting posts needs: the key the credentials are sealed with, and the guarded fetch. */
export interface PostRemoval {
  secretKey: Buffer;
  fetch: typeof fetch;
}

export interface ErasureQueues {
  redis: RedisConnection;
  webhooks: Queue<WebhookJob>;
  publishing: Queue<PublishingJob>;
}

export const deliveryErasureHandlers = (db: Db, queues: () => ErasureQueues, sites: PostRemoval): ServiceImpl<typeof DeliveryErasureService> => ({
  async removePosts(req) {
    if (!isUuid(req.externalId)) throw invalidFields({ external_id: ["external_id must be a UUID."] });
    let removed = 0;
    for (const post of req.posts) {
      let opened: Awaited<ReturnType<typeof openDestination>>;
      try {
        opened = await openDestination(db, sites.secretKey, Number(req.projectId), Number(post.destinationId));
      } catch (error) {
        // Deleted since: no credential reaches that site any more.
        if (error instanceof DomainError && error.kind === "not_found") continue;
        throw error;
      }
      try {
        if (await publisherFor(opened.destination, opened.credential, sites.fetch).unpublish({ articleKey: req.externalId.toLowerCase(), remoteId: post.remoteId })) removed++;
      } catch (error) {
        if (!isPublishFailure(error)) throw error;
        throw new ConnectError(`The post on ${opened.destination.siteUrl} could not be removed (${error.message}); delete the article again, or without unpublish.`, Code.Unavailable);
      }
    }
    return { removed };
  },
  async eraseDeliveries(req) {
    if (!isUuid(req.externalId)) throw invalidFields({ external_id: ["external_id must be a UUID."] });
    const externalId = req.externalId.toLowerCase();
    const { redis, webhooks, publishing } = queues();
    const ours = (job: { data: { externalId?: string } }) => job.data?.externalId?.toLowerCase() === externalId;
    const forgotten = [await forgetJobs(webhooks, redis, ours, [externalId]), await forgetJobs(publishing, redis, ours, [externalId])];
    if (forgotten.some((f) => f.running > 0)) throw new ConnectError("A delivery or publication of the article is running; erase it again shortly.", Code.Aborted);
    await db.delete(messages).where(eq(messages.externalId, externalId));
    await eraseArticleDeliveries(db, externalId);
    return { jobsRemoved: forgotten.reduce((n, f) => n + f.removed, 0) };
  },
});
