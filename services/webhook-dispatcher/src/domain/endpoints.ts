// A project's webhook endpoints (beyond the spec's per-article webhook_url): what a user may store,
// checked here with one message per field, and each endpoint's own Standard Webhooks secret, made
// here, shown once by the caller and kept sealed (AES-256-GCM, bound to the endpoint's id).
import { randomBytes } from "node:crypto";
import { and, asc, eq, sql } from "drizzle-orm";
import { invalidFields, notFound, throwIfAny, type FieldErrors } from "../../../kit/src/errors.ts";
import { checkUrlShape } from "../../../kit/src/rules/url-shape.ts";
import type { Db } from "../db/client.ts";
import { endpointAttempts, endpointDeliveries, endpoints } from "../db/schema.ts";
import { openSecret, sealSecret } from "./secret-box.ts";
import { newSigningSecret } from "./standard-webhooks.ts";

/** The events an endpoint may subscribe to. A test event goes to the endpoint it tests, whatever it subscribes to. */
export const ENDPOINT_EVENTS = ["article.completed", "article.failed", "article.published", "article.version_created", "quota.low"] as const;
export type EndpointEvent = (typeof ENDPOINT_EVENTS)[number];
export const TEST_EVENT = "webhook.test";

export const ENDPOINT_LIMITS = { url: 500, description: 200, perProject: 20 } as const;

export type EndpointRecord = typeof endpoints.$inferSelect;
/** An endpoint as every read shows it: never its secret. */
export type Endpoint = Omit<EndpointRecord, "secretNonce" | "secretCiphertext">;

const secretContext = (endpointId: string) => `webhook-endpoint:${endpointId}`;

const shown = ({ secretNonce: _n, secretCiphertext: _c, ...endpoint }: EndpointRecord): Endpoint => endpoint;

export interface EndpointFields {
  url?: string;
  description?: string;
  events?: readonly string[];
  enabled?: boolean;
}

type StoredFields = Omit<EndpointFields, "events"> & { events?: string[] };

/** The fields as they will be stored, or INVALID_ARGUMENT naming every field that is wrong. */
export function checkedEndpointFields(input: EndpointFields, creating: boolean): StoredFields {
  const errors: FieldErrors = {};
  const out: StoredFields = {};
  if (input.url !== undefined || creating) {
    const url = (input.url ?? "").trim();
    const shape = url.length === 0 ? "required" : url.length > ENDPOINT_LIMITS.url ? `longer than ${ENDPOINT_LIMITS.url} characters` : checkUrlShape(url);
    if (shape) errors.url = [`url must be an http or https address: ${shape}.`];
    out.url = url;
  }
  if (input.description !== undefined) {
    const description = input.description.trim();
    if (description.length > ENDPOINT_LIMITS.description) errors.description = [`description must be at most ${ENDPOINT_LIMITS.description} characters.`];
    out.description = description;
  }
  if (input.events !== undefined || creating) {
    const events = [...new Set(input.events ?? [])];
    const unknown = events.filter((e) => !(ENDPOINT_EVENTS as readonly string[]).includes(e));
    if (events.length === 0) errors.events = [`events must name at least one of ${ENDPOINT_EVENTS.join(", ")}.`];
    else if (unknown.length > 0) errors.events = [`Unknown event${unknown.length > 1 ? "s" : ""} ${unknown.slice(0, 5).join(", ")}; events are ${ENDPOINT_EVENTS.join(", ")}.`];
    out.events = events;
  }
  if (input.enabled !== undefined) out.enabled = input.enabled;
  throwIfAny(errors);
  return out;
}

function sealed(key: Buffer, endpointId: string) {
  const secret = newSigningSecret();
  const box = sealSecret(key, secret, secretContext(endpointId));
  return { secret, columns: { secretNonce: box.nonce, secretCiphertext: box.ciphertext, secretCreatedAt: new Date() } };
}

/** A new endpoint and its secret in clear, which the caller shows once. */
export async function createEndpoint(db: Db, key: Buffer, input: EndpointFields & { projectId: number; accountId: number }): Promise<{ endpoint: Endpoint; secret: string }> {
  const fields = checkedEndpointFields(input, true);
  const id = `we_${randomBytes(12).toString("base64url")}`;
  const { secret, columns } = sealed(key, id);
  return db.transaction(async (tx) => {
    // One count per project at a time, so two creations cannot both take the last place.
    await tx.execute(sql`select pg_advisory_xact_lock(hashtext('webhook_dispatcher.endpoints'), ${input.projectId}::int)`);
    const [{ n }] = await tx.select({ n: sql<number>`count(*)::int` }).from(endpoints).where(eq(endpoints.projectId, input.projectId));
    if (n >= ENDPOINT_LIMITS.perProject) throw invalidFields({ url: [`A project has at most ${ENDPOINT_LIMITS.perProject} webhook endpoints.`] });
    const [row] = await tx
      .insert(endpoints)
      .values({ id, projectId: input.projectId, accountId: input.accountId, url: fields.url!, description: fields.description ?? "", events: fields.events!, enabled: input.enabled ?? true, ...columns })
      .returning();
    return { endpoint: shown(row!), secret };
  });
}

export async function listEndpoints(db: Db, projectId: number): Promise<Endpoint[]> {
  return (await db.select().from(endpoints).where(eq(endpoints.projectId, projectId)).orderBy(asc(endpoints.createdAt), asc(endpoints.id))).map(shown);
}

export async function getEndpoint(db: Db, projectId: number, id: string): Promise<Endpoint> {
  const [row] = await db.select().from(endpoints).where(and(eq(endpoints.projectId, projectId), eq(endpoints.id, id)));
  if (!row) throw notFound("Webhook endpoint not found.");
  return shown(row);
}

export async function updateEndpoint(db: Db, projectId: number, id: string, input: EndpointFields): Promise<Endpoint> {
  const fields = checkedEndpointFields(input, false);
  const [row] = await db
    .update(endpoints)
    .set({ ...fields, updatedAt: new Date() })
    .where(and(eq(endpoints.projectId, projectId), eq(endpoints.id, id)))
    .returning();
  if (!row) throw notFound("Webhook endpoint not found.");
  return shown(row);
}

/** A new secret for the endpoint, replacing the old one at once; the caller shows it once. */
export async function rollEndpointSecret(db: Db, key: Buffer, projectId: number, id: string): Promise<{ endpoint: Endpoint; secret: string }> {
  const { secret, columns } = sealed(key, id);
  const [row] = await db
    .update(endpoints)
    .set({ ...columns, updatedAt: new Date() })
    .where(and(eq(endpoints.projectId, projectId), eq(endpoints.id, id)))
    .returning();
  if (!row) throw notFound("Webhook endpoint not found.");
  return { endpoint: shown(row), secret };
}

/** Deletes the endpoint with its delivery log, in one transaction; false when there was none. */
export async function deleteEndpoint(db: Db, projectId: number, id: string): Promise<boolean> {
  return db.transaction(async (tx) => {
    const removed = await tx.delete(endpoints).where(and(eq(endpoints.projectId, projectId), eq(endpoints.id, id))).returning({ id: endpoints.id });
    if (removed.length === 0) return false;
    const deliveries = tx.select({ id: endpointDeliveries.id }).from(endpointDeliveries).where(eq(endpointDeliveries.endpointId, id));
    await tx.delete(endpointAttempts).where(sql`${endpointAttempts.deliveryId} in ${deliveries}`);
    await tx.delete(endpointDeliveries).where(eq(endpointDeliveries.endpointId, id));
    return true;
  });
}

/** The endpoint's secret in clear, for signing one attempt. */
export function endpointSecret(key: Buffer, row: Pick<EndpointRecord, "id" | "secretNonce" | "secretCiphertext">): string {
  try {
    return openSecret(key, { nonce: row.secretNonce, ciphertext: row.secretCiphertext }, secretContext(row.id));
  } catch {
    throw new Error(`the secret of webhook endpoint ${row.id} cannot be decrypted (was WEBHOOK_SECRET_KEY changed? It is the only key secrets are sealed with)`);
  }
}

/** The projects that have an enabled endpoint: article events of other projects are not handed over. */
export async function projectsWithEndpoints(db: Db): Promise<number[]> {
  const rows = await db.selectDistinct({ projectId: endpoints.projectId }).from(endpoints).where(eq(endpoints.enabled, true));
  return rows.map((r) => r.projectId);
}

export async function projectHasEndpoints(db: Db, projectId: number): Promise<boolean> {
  const [row] = await db.select({ id: endpoints.id }).from(endpoints).where(and(eq(endpoints.projectId, projectId), eq(endpoints.enabled, true))).limit(1);
  return row !== undefined;
}
