// gRPC handlers of WebhookEndpointService: thin translations between proto messages and the
// endpoints and deliveries of domain/. Each change keeps the Redis set of projects with endpoints
// (which article-store asks before handing an event over) in step; should Redis refuse, the change
// stands (its answer may carry a secret shown once) and the workers' periodic pass puts it right.
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import type { Queue } from "bullmq";
import { WebhookEndpointService, type EndpointDeliverySchema, type EndpointSchema } from "../../../proto/gen/articles/webhook_dispatcher/v1/endpoints_pb.ts";
import { invalidFields, notFound } from "../../kit/src/errors.ts";
import type { EndpointDeliveryJob } from "../../kit/src/queues.ts";
import type { RedisConnection } from "../../kit/src/redis.ts";
import type { Db } from "./db/client.ts";
import type { Logger } from "../../kit/src/logger.ts";
import { endpointDelivery, listEndpointDeliveries, testDelivery, type EndpointAttempt, type EndpointDelivery } from "./domain/endpoint-deliveries.ts";
import { createEndpoint, deleteEndpoint, getEndpoint, listEndpoints, rollEndpointSecret, updateEndpoint, type Endpoint } from "./domain/endpoints.ts";
import { positiveId } from "./domain/destinations.ts";
import { noteEndpointProject, queueDelivery } from "./endpoint-worker.ts";

export interface EndpointRoutesDeps {
  db: Db;
  secretKey: Buffer;
  redis: () => RedisConnection;
  redisPrefix: string;
  deliveries: () => Queue<EndpointDeliveryJob>;
  logger: Logger;
}

const endpointMessage = (e: Endpoint): MessageInitShape<typeof EndpointSchema> => ({
  id: e.id,
  projectId: BigInt(e.projectId),
  url: e.url,
  description: e.description,
  events: e.events,
  enabled: e.enabled,
  secretCreatedAt: timestampFromDate(e.secretCreatedAt),
  createdAt: timestampFromDate(e.createdAt),
  updatedAt: timestampFromDate(e.updatedAt),
});

const attemptMessage = (a: EndpointAttempt) => ({
  attemptedAt: timestampFromDate(a.attemptedAt),
  statusCode: a.statusCode ?? undefined,
  error: a.error ?? undefined,
  durationMs: a.durationMs,
  responseExcerpt: a.responseExcerpt ?? undefined,
  succeeded: a.succeeded,
  redelivery: a.redelivery,
});

const deliveryMessage = (d: EndpointDelivery & { attempts?: EndpointAttempt[] }): MessageInitShape<typeof EndpointDeliverySchema> => ({
  id: BigInt(d.id),
  endpointId: d.endpointId,
  eventId: d.eventId,
  eventType: d.eventType,
  state: d.state,
  createdAt: timestampFromDate(d.createdAt),
  attempts: (d.attempts ?? []).map(attemptMessage),
  body: d.body,
});

function endpointIdOf(value: string): string {
  if (!/^we_[A-Za-z0-9_-]{1,40}$/.test(value)) throw notFound("Webhook endpoint not found.");
  return value;
}

export function endpointRoutes(deps: EndpointRoutesDeps) {
  const { db, secretKey } = deps;
  const ids = (req: { projectId: bigint; endpointId: string }) => [positiveId("project_id", req.projectId), endpointIdOf(req.endpointId)] as const;
  const note = (projectId: number) =>
    noteEndpointProject(db, deps.redis(), deps.redisPrefix, projectId).catch((error) =>
      deps.logger.warn("could not note the project's webhook endpoints in Redis; the next pass will", { projectId, error: (error as Error).message }),
    );

  return (router: ConnectRouter) => {
    router.service(WebhookEndpointService, {
      async createEndpoint(req) {
        const projectId = positiveId("project_id", req.projectId);
        const accountId = positiveId("account_id", req.accountId);
        const { endpoint, secret } = await createEndpoint(db, secretKey, { projectId, accountId, url: req.url, description: req.description, events: req.events, enabled: req.enabled });
        await note(projectId);
        return { endpoint: endpointMessage(endpoint), secret };
      },
      async listEndpoints(req) {
        return { endpoints: (await listEndpoints(db, positiveId("project_id", req.projectId))).map(endpointMessage) };
      },
      async getEndpoint(req) {
        return { endpoint: endpointMessage(await getEndpoint(db, ...ids(req))) };
      },
      async updateEndpoint(req) {
        const [projectId, endpointId] = ids(req);
        const endpoint = await updateEndpoint(db, projectId, endpointId, { url: req.url, description: req.description, events: req.eventsSet ? req.events : undefined, enabled: req.enabled });
        await note(projectId);
        return { endpoint: endpointMessage(endpoint) };
      },
      async deleteEndpoint(req) {
        const [projectId, endpointId] = ids(req);
        const deleted = await deleteEndpoint(db, projectId, endpointId);
        await note(projectId);
        return { deleted };
      },
      async rollEndpointSecret(req) {
        const { endpoint, secret } = await rollEndpointSecret(db, secretKey, ...ids(req));
        return { endpoint: endpointMessage(endpoint), secret };
      },
      async sendTestEvent(req) {
        const endpoint = await getEndpoint(db, ...ids(req));
        const delivery = await testDelivery(db, endpoint);
        await queueDelivery(deps.deliveries(), delivery.id);
        return { delivery: deliveryMessage(delivery) };
      },
      async listEndpointDeliveries(req) {
        const [projectId, endpointId] = ids(req);
        await getEndpoint(db, projectId, endpointId);
        if (req.limit < 0 || req.limit > 100) throw invalidFields({ limit: ["limit must be 1 to 100."] });
        const page = await listEndpointDeliveries(db, endpointId, req.limit || 20, req.before === undefined ? undefined : Number(req.before));
        return { deliveries: page.deliveries.map(deliveryMessage), nextBefore: page.nextBefore === undefined ? undefined : BigInt(page.nextBefore) };
      },
      async redeliverDelivery(req) {
        const [projectId, endpointId] = ids(req);
        await getEndpoint(db, projectId, endpointId);
        const delivery = await endpointDelivery(db, endpointId, positiveId("delivery_id", req.deliveryId));
        await queueDelivery(deps.deliveries(), delivery.id, true);
        return { delivery: deliveryMessage(delivery) };
      },
    });
  };
}
