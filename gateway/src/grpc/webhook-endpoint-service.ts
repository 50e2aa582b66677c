// articles.api.v1.WebhookEndpointService: a project's webhook endpoints over gRPC for internal
// teams. Each method passes the same gates as /v1 (API key or acting workload, subscription, the
// "workflows" rate limit of its HTTP twin) and runs the same operation
// (webhook-endpoints/endpoint-operations.ts) on the same public JSON body the HTTP route passes, so
// validation, access and refusals are those of /v1; this file only translates between the proto
// messages and that JSON, whose wire names the messages share.
import { fromJson, toJson, type JsonObject, type JsonValue } from "@bufbuild/protobuf";
import type { ConnectRouter } from "@connectrpc/connect";
import { WebhookDeliverySchema, WebhookEndpointInputSchema, WebhookEndpointSchema, WebhookEndpointService, type WebhookEndpointInput } from "../../../proto/gen/articles/api/v1/webhook_endpoints_pb.ts";
import type { EndpointOperations } from "../webhook-endpoints/endpoint-operations.ts";
import type { PublicCalls } from "./public-calls.ts";

const BUCKET = "workflows";

const endpointOf = ({ secret: _secret, ...endpoint }: Record<string, unknown>) => fromJson(WebhookEndpointSchema, endpoint as JsonValue, { ignoreUnknownFields: true });
const deliveryOf = (delivery: unknown) => fromJson(WebhookDeliverySchema, delivery as JsonValue, { ignoreUnknownFields: true });

/** The body POST or PATCH /v1/projects/{project}/webhook-endpoints takes, from the proto message. */
export function endpointBody(input: WebhookEndpointInput | undefined, creating: boolean): JsonObject {
  if (!input) return {};
  const { events_set: _set, ...body } = toJson(WebhookEndpointInputSchema, input, { useProtoFieldName: true }) as JsonObject;
  // An empty list is "not given" in proto3: on creation it is given (and refused), on update only when said so.
  if (creating || input.eventsSet) body.events = [...input.events];
  else delete body.events;
  return body;
}

export function webhookEndpointService(router: ConnectRouter, calls: PublicCalls, endpoints: EndpointOperations): void {
  const { answer } = calls;
  const callerOf = calls.callerOf(BUCKET);
  const project = (req: { projectId: bigint }) => String(req.projectId);
  router.service(WebhookEndpointService, {
    listWebhookEndpoints: (req, ctx) => answer("ListWebhookEndpoints", async () => ({ endpoints: (await endpoints.list(await callerOf(ctx), project(req))).map(endpointOf) })),
    createWebhookEndpoint: (req, ctx) =>
      answer("CreateWebhookEndpoint", async () => {
        const created = await endpoints.create(await callerOf(ctx), project(req), endpointBody(req.endpoint, true));
        return { endpoint: endpointOf(created), secret: created.secret };
      }),
    getWebhookEndpoint: (req, ctx) => answer("GetWebhookEndpoint", async () => ({ endpoint: endpointOf(await endpoints.get(await callerOf(ctx), project(req), req.endpointId)) })),
    updateWebhookEndpoint: (req, ctx) =>
      answer("UpdateWebhookEndpoint", async () => ({ endpoint: endpointOf(await endpoints.update(await callerOf(ctx), project(req), req.endpointId, endpointBody(req.endpoint, false))) })),
    deleteWebhookEndpoint: (req, ctx) => answer("DeleteWebhookEndpoint", async () => ({ deleted: await endpoints.delete(await callerOf(ctx), project(req), req.endpointId) })),
    rollWebhookEndpointSecret: (req, ctx) =>
      answer("RollWebhookEndpointSecret", async () => {
        const rolled = await endpoints.rollSecret(await callerOf(ctx), project(req), req.endpointId);
        return { endpoint: endpointOf(rolled), secret: rolled.secret };
      }),
    sendWebhookTestEvent: (req, ctx) => answer("SendWebhookTestEvent", async () => ({ delivery: deliveryOf(await endpoints.sendTest(await callerOf(ctx), project(req), req.endpointId)) })),
    listWebhookDeliveries: (req, ctx) =>
      answer("ListWebhookDeliveries", async () => {
        const query = { limit: req.limit === undefined ? undefined : String(req.limit), before: req.before === undefined ? undefined : String(req.before) };
        const page = await endpoints.deliveries(await callerOf(ctx), project(req), req.endpointId, query);
        return { deliveries: page.deliveries.map(deliveryOf), nextBefore: page.next_before === null ? undefined : BigInt(page.next_before) };
      }),
    redeliverWebhookDelivery: (req, ctx) =>
      answer("RedeliverWebhookDelivery", async () => ({ delivery: deliveryOf(await endpoints.redeliver(await callerOf(ctx), project(req), req.endpointId, String(req.deliveryId))) })),
  });
}
