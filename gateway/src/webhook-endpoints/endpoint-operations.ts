// The webhook endpoint operations of the public API, once: a project's endpoints
// (/v1/projects/{project}/webhook-endpoints, the dashboard's API and articles.api.v1 all run
// these). Order of checks as for destinations: path ids (404), project access (404/403: view to
// read the endpoints and their deliveries, update for every change, a test event and a
// redelivery), body (422), then webhook-dispatcher, which owns the endpoints. Each change goes to
// the account's audit log after it is made (who, what, when); the secret never does.
import type { Endpoint, EndpointDelivery } from "../../../proto/gen/articles/webhook_dispatcher/v1/endpoints_pb.ts";
import type { Project } from "../../../proto/gen/articles/accounts_billing/v1/accounts_pb.ts";
import { iso } from "../../../services/kit/src/public-article.ts";
import { notFoundError, validationError } from "../errors.ts";
import type { Caller, V1Gate } from "../plugins/caller.ts";
import type { ProjectAccess } from "../plugins/project-authorizer.ts";
import { pathId } from "../workflows/step-input.ts";
import type { Logger } from "../../../services/kit/src/logger.ts";

export const presentEndpoint = (e: Endpoint) => ({
  id: e.id,
  project_id: Number(e.projectId),
  url: e.url,
  description: e.description,
  events: [...e.events],
  enabled: e.enabled,
  secret_created_at: iso(e.secretCreatedAt),
  created_at: iso(e.createdAt),
  updated_at: iso(e.updatedAt),
});

export const presentDelivery = (d: EndpointDelivery) => ({
  id: Number(d.id),
  endpoint_id: d.endpointId,
  event_id: d.eventId,
  event_type: d.eventType,
  state: d.state,
  created_at: iso(d.createdAt),
  payload: d.body,
  attempts: d.attempts.map((a) => ({
    attempted_at: iso(a.attemptedAt),
    status_code: a.statusCode ?? null,
    error: a.error ?? null,
    duration_ms: a.durationMs,
    response_excerpt: a.responseExcerpt ?? null,
    succeeded: a.succeeded,
    redelivery: a.redelivery,
  })),
});

export type PresentedEndpoint = ReturnType<typeof presentEndpoint>;
export type PresentedDelivery = ReturnType<typeof presentDelivery>;

interface EndpointInput {
  url?: string;
  description?: string;
  events?: string[];
  enabled?: boolean;
}

/** The body's fields with their JSON types checked; values are webhook-dispatcher's to judge. */
function endpointInput(body: unknown, creating: boolean): EndpointInput {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw validationError({ body: ["The request body must be a JSON object."] });
  const b = body as Record<string, unknown>;
  const errors: Record<string, string[]> = {};
  const input: EndpointInput = {};
  if (b.url !== undefined || creating) {
    if (typeof b.url !== "string") errors.url = ["url is required and must be a string."];
    else input.url = b.url;
  }
  if (b.description !== undefined && b.description !== null) {
    if (typeof b.description !== "string") errors.description = ["description must be a string."];
    else input.description = b.description;
  }
  if (b.events !== undefined || creating) {
    if (!Array.isArray(b.events) || b.events.some((e) => typeof e !== "string")) errors.events = ["events is required and must be an array of event names."];
    else input.events = b.events as string[];
  }
  if (b.enabled !== undefined) {
    if (typeof b.enabled !== "boolean") errors.enabled = ["enabled must be true or false."];
    else input.enabled = b.enabled;
  }
  if (Object.keys(errors).length > 0) throw validationError(errors);
  return input;
}

const DELIVERY_PAGE_MAX = 100;

export class EndpointOperations {
  constructor(
    private readonly gate: V1Gate,
    private readonly logger: Logger,
  ) {}

  private get dispatcher() {
    return this.gate.clients.endpoints;
  }

  /** The project of the path, after the caller's access to it is confirmed. */
  private async project(caller: Caller, raw: string, access: ProjectAccess): Promise<Project> {
    const id = pathId(raw);
    if (id === null) throw notFoundError("Project not found.");
    return this.gate.projects.authorize(caller, id, access);
  }

  private endpointId(raw: string): string {
    if (!/^we_[A-Za-z0-9_-]{1,40}$/.test(raw)) throw notFoundError("Webhook endpoint not found.");
    return raw;
  }

  /**
   * Written after the change (another service's transaction): an entry the audit log could not
   * take is logged as an error, never fails the change, whose answer may carry a secret shown once.
   */
  private async audit(caller: Caller, project: Project, action: string, subject: string): Promise<void> {
    const entry = { acting: { userId: BigInt(caller.userId), accountId: project.accountId }, action, subject: subject.slice(0, 500) };
    await this.gate.clients.tenantAdmin.recordAuditEvent(entry).catch((error) =>
      this.logger.error("could not write a webhook endpoint change to the audit log", { action, subject: entry.subject, accountId: Number(project.accountId), userId: caller.userId, error: (error as Error).message }),
    );
  }

  async list(caller: Caller, project: string): Promise<PresentedEndpoint[]> {
    const p = await this.project(caller, project, "view");
    return (await this.dispatcher.listEndpoints({ projectId: p.id })).endpoints.map(presentEndpoint);
  }

  /** The endpoint added, with its secret: the only answer that carries it. */
  async create(caller: Caller, project: string, body: unknown): Promise<PresentedEndpoint & { secret: string }> {
    const p = await this.project(caller, project, "update");
    const input = endpointInput(body, true);
    const { endpoint, secret } = await this.dispatcher.createEndpoint({ projectId: p.id, accountId: p.accountId, url: input.url!, description: input.description ?? "", events: input.events!, enabled: input.enabled });
    await this.audit(caller, p, "endpoint.created", `endpoint ${endpoint!.id} (${endpoint!.url}; ${endpoint!.events.join(", ")}) of project ${p.id}`);
    return { ...presentEndpoint(endpoint!), secret };
  }

  async get(caller: Caller, project: string, endpoint: string): Promise<PresentedEndpoint> {
    const endpointId = this.endpointId(endpoint);
    const p = await this.project(caller, project, "view");
    return presentEndpoint((await this.dispatcher.getEndpoint({ projectId: p.id, endpointId })).endpoint!);
  }

  async update(caller: Caller, project: string, endpoint: string, body: unknown): Promise<PresentedEndpoint> {
    const endpointId = this.endpointId(endpoint);
    const p = await this.project(caller, project, "update");
    const input = endpointInput(body, false);
    const updated = (await this.dispatcher.updateEndpoint({ projectId: p.id, endpointId, url: input.url, description: input.description, events: input.events ?? [], eventsSet: input.events !== undefined, enabled: input.enabled })).endpoint!;
    const changed = Object.keys(input).join(", ") || "nothing";
    await this.audit(caller, p, "endpoint.updated", `endpoint ${updated.id} (${updated.url}; ${updated.events.join(", ")}${updated.enabled ? "" : "; disabled"}) of project ${p.id}: ${changed}`);
    return presentEndpoint(updated);
  }

  async delete(caller: Caller, project: string, endpoint: string): Promise<boolean> {
    const endpointId = this.endpointId(endpoint);
    const p = await this.project(caller, project, "update");
    const { deleted } = await this.dispatcher.deleteEndpoint({ projectId: p.id, endpointId });
    if (deleted) await this.audit(caller, p, "endpoint.deleted", `endpoint ${endpointId} of project ${p.id}`);
    return deleted;
  }

  async rollSecret(caller: Caller, project: string, endpoint: string): Promise<PresentedEndpoint & { secret: string }> {
    const endpointId = this.endpointId(endpoint);
    const p = await this.project(caller, project, "update");
    const { endpoint: rolled, secret } = await this.dispatcher.rollEndpointSecret({ projectId: p.id, endpointId });
    await this.audit(caller, p, "endpoint.secret_rolled", `endpoint ${endpointId} of project ${p.id}`);
    return { ...presentEndpoint(rolled!), secret };
  }

  async sendTest(caller: Caller, project: string, endpoint: string): Promise<PresentedDelivery> {
    const endpointId = this.endpointId(endpoint);
    const p = await this.project(caller, project, "update");
    return presentDelivery((await this.dispatcher.sendTestEvent({ projectId: p.id, endpointId })).delivery!);
  }

  async deliveries(caller: Caller, project: string, endpoint: string, query: { limit?: string; before?: string }): Promise<{ deliveries: PresentedDelivery[]; next_before: number | null }> {
    const endpointId = this.endpointId(endpoint);
    const errors: Record<string, string[]> = {};
    const limit = query.limit === undefined ? 20 : Number(query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > DELIVERY_PAGE_MAX) errors.limit = [`limit must be an integer from 1 to ${DELIVERY_PAGE_MAX}.`];
    const before = query.before === undefined ? undefined : pathId(query.before);
    if (before === null) errors.before = ["before must be a delivery id."];
    const p = await this.project(caller, project, "view");
    if (Object.keys(errors).length > 0) throw validationError(errors);
    const page = await this.dispatcher.listEndpointDeliveries({ projectId: p.id, endpointId, limit, before: before == null ? undefined : BigInt(before) });
    return { deliveries: page.deliveries.map(presentDelivery), next_before: page.nextBefore === undefined ? null : Number(page.nextBefore) };
  }

  async redeliver(caller: Caller, project: string, endpoint: string, delivery: string): Promise<PresentedDelivery> {
    const endpointId = this.endpointId(endpoint);
    const deliveryId = pathId(delivery);
    if (deliveryId === null) throw notFoundError("Delivery not found.");
    const p = await this.project(caller, project, "update");
    return presentDelivery((await this.dispatcher.redeliverDelivery({ projectId: p.id, endpointId, deliveryId: BigInt(deliveryId) })).delivery!);
  }
}
