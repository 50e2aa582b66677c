// Webhook endpoints (beyond the spec, additive): a project's endpoints under
// /v1/projects/{project}/webhook-endpoints, their test events, delivery log and redeliveries.
// Gates first (401/402/429, the "workflows" limit: project settings); each route translates HTTP
// to webhook-endpoints/endpoint-operations.ts. The per-article webhook_url is not concerned.
import { Elysia } from "elysia";
import type { V1Gate } from "../plugins/caller.ts";
import { v1Mount, type CallerMount } from "../plugins/v1-gate.ts";
import type { EndpointOperations } from "../webhook-endpoints/endpoint-operations.ts";

const TAGS = ["Webhook endpoints"];

/** `mount`: /v1 with a key, or the dashboard's API with a session (the same handlers). */
export const webhookEndpointRoutes = (gate: V1Gate, endpoints: EndpointOperations, mount: CallerMount = v1Mount(gate), at = mount.prefix) =>
  new Elysia({ name: "webhook-endpoint-routes", seed: at })
    .use(mount.gateFor("workflows"))
    .get(`${at}/projects/:project/webhook-endpoints`, async ({ caller, params }) => ({ success: true, data: await endpoints.list(caller, params.project) }), {
      detail: { summary: "List the project's webhook endpoints (never their secrets)", tags: TAGS },
    })
    .post(
      `${at}/projects/:project/webhook-endpoints`,
      async ({ caller, params, body, set }) => {
        set.status = 201;
        return { success: true, data: await endpoints.create(caller, params.project, body) };
      },
      { detail: { summary: "Add a webhook endpoint; the answer carries its signing secret, shown this once", tags: TAGS } },
    )
    .get(`${at}/projects/:project/webhook-endpoints/:endpoint`, async ({ caller, params }) => ({ success: true, data: await endpoints.get(caller, params.project, params.endpoint) }), {
      detail: { summary: "Retrieve one webhook endpoint", tags: TAGS },
    })
    .patch(
      `${at}/projects/:project/webhook-endpoints/:endpoint`,
      async ({ caller, params, body }) => ({ success: true, data: await endpoints.update(caller, params.project, params.endpoint, body) }),
      { detail: { summary: "Change an endpoint's url, description, events or enabled", tags: TAGS } },
    )
    .delete(
      `${at}/projects/:project/webhook-endpoints/:endpoint`,
      async ({ caller, params }) => {
        const deleted = await endpoints.delete(caller, params.project, params.endpoint);
        return { success: true, message: deleted ? "Webhook endpoint deleted." : "No such webhook endpoint; nothing was deleted." };
      },
      { detail: { summary: "Delete a webhook endpoint and its delivery log", tags: TAGS } },
    )
    .post(
      `${at}/projects/:project/webhook-endpoints/:endpoint/roll-secret`,
      async ({ caller, params }) => ({ success: true, data: await endpoints.rollSecret(caller, params.project, params.endpoint) }),
      { detail: { summary: "Replace the endpoint's signing secret; the new one is shown this once", tags: TAGS } },
    )
    .post(
      `${at}/projects/:project/webhook-endpoints/:endpoint/test`,
      async ({ caller, params, set }) => {
        set.status = 202;
        return { success: true, message: "Test event queued.", data: await endpoints.sendTest(caller, params.project, params.endpoint) };
      },
      { detail: { summary: "Queue a webhook.test event to the endpoint", tags: TAGS } },
    )
    .get(
      `${at}/projects/:project/webhook-endpoints/:endpoint/deliveries`,
      async ({ caller, params, query }) => {
        const page = await endpoints.deliveries(caller, params.project, params.endpoint, query as { limit?: string; before?: string });
        return { success: true, data: page.deliveries, next_before: page.next_before };
      },
      { detail: { summary: "The endpoint's deliveries, newest first, each with its attempts (time, status, latency, response excerpt)", tags: TAGS } },
    )
    .post(
      `${at}/projects/:project/webhook-endpoints/:endpoint/deliveries/:delivery/redeliver`,
      async ({ caller, params, set }) => {
        set.status = 202;
        return { success: true, message: "Redelivery queued.", data: await endpoints.redeliver(caller, params.project, params.endpoint, params.delivery) };
      },
      { detail: { summary: "Queue one more attempt of a delivery (same body, same webhook-id)", tags: TAGS } },
    );
