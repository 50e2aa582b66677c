// Tables of the webhook-dispatcher context, in its own Postgres schema.
import { bigint, bigserial, index, jsonb, pgSchema, text, timestamp } from "drizzle-orm/pg-core";

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
