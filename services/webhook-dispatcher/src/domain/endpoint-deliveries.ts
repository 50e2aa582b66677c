// Deliveries to project webhook endpoints: an event fanned out to the endpoints that subscribe
// (one delivery each, its body frozen then), each attempt signed with the endpoint's own secret,
// posted through the SSRF guard and written to the delivery log, and redelivery of one delivery.
// Queue mechanics live in endpoint-worker.ts.
import { and, asc, desc, eq, lt, sql } from "drizzle-orm";
import { randomBytes } from "node:crypto";
import { notFound } from "../../../kit/src/errors.ts";
import type { EndpointEventJob } from "../../../kit/src/queues.ts";
import type { Db } from "../db/client.ts";
import { endpointAttempts, endpointDeliveries, endpoints } from "../db/schema.ts";
import { deliverWebhook, type DeliveryOptions } from "./deliver-webhook.ts";
import { endpointSecret, TEST_EVENT, type Endpoint } from "./endpoints.ts";
import { nextStep, type NextStep } from "./retry-schedule.ts";
import { signatureHeaders } from "./standard-webhooks.ts";

export type EndpointDelivery = typeof endpointDeliveries.$inferSelect;
export type EndpointAttempt = typeof endpointAttempts.$inferSelect;

const USER_AGENT = "ArticleGenerationService-Webhooks/1";
const EXCERPT_CHARACTERS = 500;

/** The body every endpoint receives: Standard Webhooks' recommended shape. */
export const eventBody = (event: Pick<EndpointEventJob, "type" | "occurredAt" | "data">) => JSON.stringify({ type: event.type, timestamp: event.occurredAt, data: event.data });

/**
 * One delivery per enabled endpoint subscribed to the event (its project's, or every project's of
 * the account for an account's event), made at most once per endpoint. Answers the event's
 * deliveries still pending, made now or by an earlier fan-out that may not have queued them.
 */
export async function fanOutEvent(db: Db, event: EndpointEventJob): Promise<number[]> {
  const body = eventBody(event);
  const externalId = typeof event.data.external_id === "string" ? event.data.external_id.toLowerCase() : null;
  const scope = event.projectId !== undefined ? sql`${endpoints.projectId} = ${event.projectId}` : sql`${endpoints.accountId} = ${event.accountId ?? -1}`;
  await db.execute(sql`
    insert into ${endpointDeliveries} (endpoint_id, project_id, event_id, event_type, external_id, body)
    select ${endpoints.id}, ${endpoints.projectId}, ${event.eventId}, ${event.type}, ${externalId}::text, ${body}
    from ${endpoints}
    where ${scope} and ${endpoints.enabled} and ${event.type} = any(${endpoints.events})
    on conflict (endpoint_id, event_id) do nothing`);
  const pending = await db
    .select({ id: endpointDeliveries.id })
    .from(endpointDeliveries)
    .where(and(eq(endpointDeliveries.eventId, event.eventId), eq(endpointDeliveries.state, "pending")));
  return pending.map((d) => d.id);
}

/** A test event for one endpoint, whatever it subscribes to. */
export async function testDelivery(db: Db, endpoint: Endpoint): Promise<EndpointDelivery> {
  const eventId = `evt_test_${randomBytes(9).toString("base64url")}`;
  const body = eventBody({ type: TEST_EVENT, occurredAt: new Date().toISOString(), data: { endpoint_id: endpoint.id, project_id: endpoint.projectId, message: "A test event sent from the API or the dashboard." } });
  const [row] = await db.insert(endpointDeliveries).values({ endpointId: endpoint.id, projectId: endpoint.projectId, eventId, eventType: TEST_EVENT, body }).returning();
  return row!;
}

export interface DeliveryPage {
  deliveries: (EndpointDelivery & { attempts: EndpointAttempt[] })[];
  /** The id to pass as `before` for the next page, when there are more. */
  nextBefore?: number;
}

/** An endpoint's deliveries, newest first, each with its attempts (oldest first). */
export async function listEndpointDeliveries(db: Db, endpointId: string, limit: number, before?: number): Promise<DeliveryPage> {
  const rows = await db
    .select()
    .from(endpointDeliveries)
    .where(and(eq(endpointDeliveries.endpointId, endpointId), before ? lt(endpointDeliveries.id, before) : undefined))
    .orderBy(desc(endpointDeliveries.id))
    .limit(limit + 1);
  const page = rows.slice(0, limit);
  const ids = page.map((d) => d.id);
  const attempts = ids.length === 0 ? [] : await db.select().from(endpointAttempts).where(sql`${endpointAttempts.deliveryId} = any(${sql.param(ids)}::int8[])`).orderBy(asc(endpointAttempts.id));
  const byDelivery = new Map<number, EndpointAttempt[]>();
  for (const a of attempts) byDelivery.set(a.deliveryId, [...(byDelivery.get(a.deliveryId) ?? []), a]);
  return { deliveries: page.map((d) => ({ ...d, attempts: byDelivery.get(d.id) ?? [] })), nextBefore: rows.length > limit ? page.at(-1)!.id : undefined };
}

export async function endpointDelivery(db: Db, endpointId: string, deliveryId: number): Promise<EndpointDelivery> {
  const [row] = await db.select().from(endpointDeliveries).where(and(eq(endpointDeliveries.endpointId, endpointId), eq(endpointDeliveries.id, deliveryId)));
  if (!row) throw notFound("Delivery not found.");
  return row;
}

export interface EndpointPolicy extends DeliveryOptions {
  attempts: number;
  backoffMs: readonly number[];
  secretKey: Buffer;
}

export type EndpointAttemptOutcome = { kind: "gone" } | { kind: "sent"; step: NextStep; attempt: EndpointAttempt };

/**
 * Attempt number `attempt` of a delivery (a redelivery is one attempt of its own: never retried,
 * and it leaves the delivery succeeded when it succeeds). "gone" when the delivery or its endpoint
 * was deleted meanwhile, or the endpoint disabled.
 */
export async function attemptEndpointDelivery(db: Db, policy: EndpointPolicy, deliveryId: number, attempt: number, redelivery: boolean): Promise<EndpointAttemptOutcome> {
  const [found] = await db.select({ delivery: endpointDeliveries, endpoint: endpoints }).from(endpointDeliveries).innerJoin(endpoints, eq(endpoints.id, endpointDeliveries.endpointId)).where(eq(endpointDeliveries.id, deliveryId));
  if (!found || (!found.endpoint.enabled && !redelivery)) return { kind: "gone" };
  const { delivery, endpoint } = found;
  const headers = { "user-agent": USER_AGENT, ...signatureHeaders(endpointSecret(policy.secretKey, endpoint), delivery.eventId, delivery.body) };
  const result = await deliverWebhook(endpoint.url, delivery.body, headers, { ...policy, keepExcerpt: EXCERPT_CHARACTERS });
  // A redelivery is one attempt: what follows a failed one is nothing.
  const step: NextStep = redelivery ? (result.succeeded ? { kind: "done" } : { kind: "give-up", reason: result.error ?? "delivery failed" }) : nextStep(result, attempt, policy);
  const state = step.kind === "done" ? "succeeded" : step.kind === "give-up" ? "failed" : "pending";
  const recorded = await db.transaction(async (tx) => {
    const [row] = await tx
      .insert(endpointAttempts)
      .values({ deliveryId, attemptedAt: result.attemptedAt, statusCode: result.statusCode ?? null, error: result.error ?? null, durationMs: result.durationMs, responseExcerpt: result.excerpt ?? null, succeeded: result.succeeded, redelivery })
      .returning();
    // A failed redelivery leaves a delivery that had succeeded as it was.
    if (!(redelivery && state === "failed")) await tx.update(endpointDeliveries).set({ state }).where(eq(endpointDeliveries.id, deliveryId));
    else await tx.update(endpointDeliveries).set({ state: "failed" }).where(and(eq(endpointDeliveries.id, deliveryId), sql`${endpointDeliveries.state} <> 'succeeded'`));
    return row!;
  });
  return { kind: "sent", step, attempt: recorded };
}

/** Erases what the endpoint deliveries keep of an article (its events' bodies and their attempts). */
export async function eraseArticleDeliveries(db: Db, externalId: string): Promise<void> {
  await db.transaction(async (tx) => {
    const ids = tx.select({ id: endpointDeliveries.id }).from(endpointDeliveries).where(eq(endpointDeliveries.externalId, externalId));
    await tx.delete(endpointAttempts).where(sql`${endpointAttempts.deliveryId} in ${ids}`);
    await tx.delete(endpointDeliveries).where(eq(endpointDeliveries.externalId, externalId));
  });
}
