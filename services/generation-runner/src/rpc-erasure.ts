// RunErasureService: the runner's part of an article's erasure. A job of the article still waiting
// in the generation queue goes first; one running (a cancelled run stopping) is answered ABORTED,
// so the gateway asks again once it has stopped and nothing is written after the erasure.
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import type { Queue } from "bullmq";
import type { RunErasureService } from "../../../proto/gen/articles/generation_runner/v1/erasure_pb.ts";
import type { GenerationJob } from "../../kit/src/queues.ts";
import { isUuid } from "../../kit/src/rules/identifiers.ts";
import type { Db } from "./db/client.ts";
import type { ImageStores } from "./domain/image-store.ts";
import { eraseRun } from "./domain/run-erasure.ts";
import { forgetJobs } from "../../kit/src/queue-erasure.ts";
import type { RedisConnection } from "../../kit/src/redis.ts";
import { invalidFields } from "../../kit/src/errors.ts";

export const runErasureHandlers = (db: Db, stores: ImageStores, generationQueue: () => { queue: Queue<GenerationJob>; redis: RedisConnection }): ServiceImpl<typeof RunErasureService> => ({
  async eraseRun(req) {
    if (!isUuid(req.externalId)) throw invalidFields({ external_id: ["external_id must be a UUID."] });
    const externalId = req.externalId.toLowerCase();
    // Its job's id is its external_id.
    const { queue, redis } = generationQueue();
    const jobs = await forgetJobs(queue, redis, (job) => job.id === externalId, [externalId]);
    if (jobs.running > 0) throw new ConnectError("The article's run is still stopping; erase it again shortly.", Code.Aborted);
    return eraseRun(db, stores, externalId);
  },
});
