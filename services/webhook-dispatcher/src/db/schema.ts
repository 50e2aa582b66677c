// Tables of the webhook-dispatcher context, in its own Postgres schema.
import { sql } from "drizzle-orm";
import { bigint, bigserial, boolean, index, integer, jsonb, pgSchema, text, timestamp, uniqueIndex } from "drizzle-orm/pg-core";

export const webhookDispatcherSchema = pgSchema("webhook_dispatcher");

/**
 * One Standard Webhooks secret per project that signs its deliveries. Kept encrypted
 * (AES-256-GCM, see domain/secret-box.ts): it has to be usable for HMAC, so it cannot be hashed.
 */
export const signingSecrets = webhookDispatcherSchema.table("signing_secrets", {
  projectId: bigint("project_id", { mode: "number" }).primaryKey(),
  nonce: text("nonce").notNull(),
  ciphertext: text("ciphertext").notNull(),
  createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
});

/**
 * A completion message, frozen at its first attempt so that every retry sends the very same
 * body (the article as it was when delivery began) to the same URL under the same webhook-id.
 */
export const messages = webhookDispatcherSchema.table(
  "messages",
  {
    /** msg_<external_id>_<version_id>: the webhook-id header. */
    id: text("id").primaryKey(),
    externalId: text("external_id").notNull(),
    versionId: bigint("version_id", { mode: "number" }).notNull(),
    projectId: bigint("project_id", { mode: "number" }).notNull(),
    url: text("url").notNull(),
    body: text("body").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("messages_external_id").on(t.externalId)],
);

/** What a destination posts with unless a publish says otherwise. */
export interface DestinationDefaults {
  status: string;
  categories: string[];
  tags: string[];
  /** WordPress user id to publish as; the connected user when null. */
  authorId: number | null;
}

/**
 * A project's publishing destination: a WordPress or Ghost site and the credential that writes to
 * it, kept encrypted like signing secrets (AES-256-GCM, bound to the destination's project), so a
 * database dump alone publishes nowhere.
 */
export const destinations = webhookDispatcherSchema.table(
  "destinations",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    projectId: bigint("project_id", { mode: "number" }).notNull(),
    kind: text("kind", { enum: ["wordpress", "ghost"] }).notNull(),
    name: text("name").notNull(),
    siteUrl: text("site_url").notNull(),
    username: text("username"),
    defaults: jsonb("defaults").$type<DestinationDefaults>().notNull(),
    credentialNonce: text("credential_nonce").notNull(),
    credentialCiphertext: text("credential_ciphertext").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("destinations_project").on(t.projectId, t.id)],
);

/**
 * A project's webhook endpoint: a URL, the events it subscribes to and its own Standard Webhooks
 * secret, sealed like the project's signing secret (bound to the endpoint's id). Beyond the spec:
 * the per-article webhook_url never goes through endpoints.
 */
export const endpoints = webhookDispatcherSchema.table(
  "endpoints",
  {
    /** we_<random>: public, and the context its secret is sealed under. */
    id: text("id").primaryKey(),
    projectId: bigint("project_id", { mode: "number" }).notNull(),
    /** The project's account: an account's events (quota.low) go to every project's endpoints. */
    accountId: bigint("account_id", { mode: "number" }).notNull(),
    url: text("url").notNull(),
    description: text("description").notNull().default(""),
    events: text("events").array().notNull(),
    enabled: boolean("enabled").notNull().default(true),
    secretNonce: text("secret_nonce").notNull(),
    secretCiphertext: text("secret_ciphertext").notNull(),
    secretCreatedAt: timestamp("secret_created_at", { withTimezone: true }).notNull().defaultNow(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [index("endpoints_project").on(t.projectId), index("endpoints_account").on(t.accountId)],
);

/**
 * One event for one endpoint: its body is frozen when the event fans out, so every attempt and a
 * redelivery send the same bytes under the same webhook-id. Unique per endpoint and event, so an
 * event fanned out twice makes one delivery.
 */
export const endpointDeliveries = webhookDispatcherSchema.table(
  "endpoint_deliveries",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    endpointId: text("endpoint_id").notNull(),
    projectId: bigint("project_id", { mode: "number" }).notNull(),
    eventId: text("event_id").notNull(),
    eventType: text("event_type").notNull(),
    /** The article an article event is about, so the article's erasure finds its deliveries. */
    externalId: text("external_id"),
    body: text("body").notNull(),
    /** pending (attempts left), succeeded, failed (no attempt left). */
    state: text("state", { enum: ["pending", "succeeded", "failed"] }).notNull().default("pending"),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex("endpoint_deliveries_event").on(t.endpointId, t.eventId),
    index("endpoint_deliveries_endpoint").on(t.endpointId, t.id),
    index("endpoint_deliveries_article").on(t.externalId).where(sql`${t.externalId} is not null`),
  ],
);

/** Each attempt of an endpoint delivery, for its log: when, what came back, how long it took. */
export const endpointAttempts = webhookDispatcherSchema.table(
  "endpoint_attempts",
  {
    id: bigserial("id", { mode: "number" }).primaryKey(),
    deliveryId: bigint("delivery_id", { mode: "number" }).notNull(),
    attemptedAt: timestamp("attempted_at", { withTimezone: true }).notNull(),
    statusCode: integer("status_code"),
    error: text("error"),
    durationMs: integer("duration_ms").notNull(),
    /** The start of the receiver's answer (at most 500 characters), for the log. */
    responseExcerpt: text("response_excerpt"),
    succeeded: boolean("succeeded").notNull(),
    redelivery: boolean("redelivery").notNull().default(false),
  },
  (t) => [index("endpoint_attempts_delivery").on(t.deliveryId, t.id)],
);
