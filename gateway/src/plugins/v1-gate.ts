// Puts every route of a /v1 plugin behind the caller gates; `bucket` names the shared rate limit.
import { Elysia } from "elysia";
import { v1Caller, type V1Gate } from "./caller.ts";

export const v1Gate = (gate: V1Gate, bucket: string) =>
  new Elysia({ name: "v1-gate", seed: bucket }).resolve({ as: "scoped" }, async ({ request, set }) => {
    const { caller, headers } = await v1Caller(gate, request.headers.get("authorization"), bucket);
    Object.assign(set.headers, headers);
    return { caller };
  });

/**
 * Where a family of routes is served and how its caller is found: /v1 with an API key (v1Gate),
 * or the dashboard's API with a session (dashboard/dashboard-session.ts), running the same handlers.
 */
export interface CallerMount {
  /** The paths' prefix: "/v1", or "/dashboard/api". */
  prefix: string;
  /** The plugin that resolves `caller` for the routes sharing one rate limit. */
  gateFor(bucket: string): ReturnType<typeof v1Gate>;
}

export const v1Mount = (gate: V1Gate): CallerMount => ({ prefix: "/v1", gateFor: (bucket) => v1Gate(gate, bucket) });
