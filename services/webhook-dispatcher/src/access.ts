// Who may call webhook-dispatcher (access-policy.ts): signing secrets are the operator's alone;
// publishing destinations and publish requests come from the gateway (for /v1 clients and
// articles.api.v1, after it checked the acting user's project access) and the operator.
import { PublishingService } from "../../../proto/gen/articles/webhook_dispatcher/v1/publishing_pb.ts";
import { WebhookSigningService } from "../../../proto/gen/articles/webhook_dispatcher/v1/signing_pb.ts";
import { WebhookEndpointService } from "../../../proto/gen/articles/webhook_dispatcher/v1/endpoints_pb.ts";
import { DeliveryErasureService } from "../../../proto/gen/articles/webhook_dispatcher/v1/erasure_pb.ts";
import { allow, CALLERS } from "../../kit/src/access-policy.ts";

const { gateway, operator } = CALLERS;

export const webhookDispatcherAccess = [
  allow(WebhookSigningService, {
    setSigningSecret: [operator],
    removeSigningSecret: [operator],
    getSigningStatus: [operator],
  }),
  allow(PublishingService, {
    createDestination: [gateway, operator],
    listDestinations: [gateway, operator],
    getDestination: [gateway, operator],
    checkDestination: [gateway, operator],
    deleteDestination: [gateway, operator],
    publishArticle: [gateway, operator],
  }),
  // A project's webhook endpoints: the gateway (for /v1 clients, the dashboard and articles.api.v1,
  // after it checked the acting user's project access) and the operator.
  allow(WebhookEndpointService, {
    createEndpoint: [gateway, operator],
    listEndpoints: [gateway, operator],
    getEndpoint: [gateway, operator],
    updateEndpoint: [gateway, operator],
    deleteEndpoint: [gateway, operator],
    rollEndpointSecret: [gateway, operator],
    sendTestEvent: [gateway, operator],
    listEndpointDeliveries: [gateway, operator],
    redeliverDelivery: [gateway, operator],
  }),
  // An article's erasure: DELETE /v1/articles/{id} through the gateway, or the operator on request.
  allow(DeliveryErasureService, {
    eraseDeliveries: [gateway, operator],
    removePosts: [gateway, operator],
  }),
];
