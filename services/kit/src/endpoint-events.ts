// Handing events over to the project webhook endpoints (webhook-dispatcher fans each out to the
// endpoints that subscribe). Producers ask first whether the project has an endpoint at all: the
// dispatcher keeps the set of those projects in Redis, so the millions of articles of projects
// without endpoints cost one SISMEMBER each and no job.
import type { Queue } from "bullmq";
import { endpointEventJobId, type EndpointEventJob } from "./queues.ts";
import { redisKey, type RedisConnection } from "./redis.ts";

/** The Redis set of the ids of projects with at least one enabled endpoint (kept by webhook-dispatcher). */
export const endpointProjectsKey = (redisPrefix: string) => redisKey(redisPrefix, "webhook-endpoint-projects");

export async function projectHasEndpoints(redis: RedisConnection, redisPrefix: string, projectId: number): Promise<boolean> {
  return (await redis.sismember(endpointProjectsKey(redisPrefix), String(projectId))) === 1;
}

/** Queues the event once: its job id is the event's id. */
export async function handOverEndpointEvent(queue: Queue<EndpointEventJob>, event: EndpointEventJob): Promise<void> {
  await queue.add(event.type, event, { jobId: endpointEventJobId(event.eventId) });
}
