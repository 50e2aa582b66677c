// The schemas of a project's webhook endpoints and their deliveries
// (/v1/projects/{project}/webhook-endpoints), apart from the article and workflow schemas.
import { Type } from "@sinclair/typebox";

const EVENT = Type.Union(
  ["article.completed", "article.failed", "article.published", "article.version_created", "quota.low"].map((e) => Type.Literal(e)),
  { description: "article.completed, article.failed, article.published, article.version_created or quota.low." },
);
const Timestamp = (description = "ISO 8601, UTC.") => Type.String({ format: "date-time", description });
const NullableTimestamp = (description?: string) => Type.Union([Timestamp(description), Type.Null()]);

const endpointFields = {
  id: Type.String({ pattern: "^we_", description: "The endpoint's id." }),
  project_id: Type.Integer({ minimum: 1, description: "Its project." }),
  url: Type.String({ description: "Where deliveries are posted." }),
  description: Type.String({ description: "A note for people." }),
  events: Type.Array(Type.String(), { description: "The events it subscribes to." }),
  enabled: Type.Boolean({ description: "Whether it receives deliveries." }),
  secret_created_at: NullableTimestamp("When its current signing secret was made."),
  created_at: NullableTimestamp(),
  updated_at: NullableTimestamp(),
};

export const WebhookEndpoint = Type.Object(endpointFields, { description: "A project's webhook endpoint; its signing secret is shown only when made (creation, roll)." });

export const WebhookEndpointWithSecret = Type.Object(
  { ...endpointFields, secret: Type.String({ pattern: "^whsec_", description: "The Standard Webhooks signing secret: shown in this answer only, never again." }) },
  { description: "A webhook endpoint with its new signing secret." },
);

export const WebhookEndpointCreate = Type.Object(
  {
    url: Type.String({ maxLength: 500, description: "An http or https address (private and loopback addresses are refused at delivery unless ALLOW_PRIVATE_URLS)." }),
    events: Type.Array(EVENT, { minItems: 1, description: "At least one event." }),
    description: Type.Optional(Type.String({ maxLength: 200 })),
    enabled: Type.Optional(Type.Boolean({ description: "true when omitted." })),
  },
  { description: "Body of POST /v1/projects/{project}/webhook-endpoints." },
);

export const WebhookEndpointUpdate = Type.Object(
  {
    url: Type.Optional(Type.String({ maxLength: 500 })),
    events: Type.Optional(Type.Array(EVENT, { minItems: 1 })),
    description: Type.Optional(Type.String({ maxLength: 200 })),
    enabled: Type.Optional(Type.Boolean()),
  },
  { description: "Body of PATCH /v1/projects/{project}/webhook-endpoints/{endpoint}: omitted fields are unchanged." },
);

export const WebhookDelivery = Type.Object(
  {
    id: Type.Integer({ minimum: 1 }),
    endpoint_id: Type.String(),
    event_id: Type.String({ description: "The webhook-id header of every attempt (the same on a redelivery)." }),
    event_type: Type.String({ description: "One of the events, or webhook.test." }),
    state: Type.Union([Type.Literal("pending"), Type.Literal("succeeded"), Type.Literal("failed")]),
    created_at: NullableTimestamp(),
    payload: Type.String({ description: "The JSON body every attempt sends: {type, timestamp, data}." }),
    attempts: Type.Array(
      Type.Object({
        attempted_at: NullableTimestamp(),
        status_code: Type.Union([Type.Integer(), Type.Null()], { description: "null: no answer (refused address, timeout, connection error)." }),
        error: Type.Union([Type.String(), Type.Null()]),
        duration_ms: Type.Integer({ minimum: 0 }),
        response_excerpt: Type.Union([Type.String(), Type.Null()], { description: "The start of the receiver's answer, at most 500 characters." }),
        succeeded: Type.Boolean(),
        redelivery: Type.Boolean({ description: "Asked for by a user." }),
      }),
      { description: "Oldest first." },
    ),
  },
  { description: "One event sent to one endpoint, with its attempts." },
);
