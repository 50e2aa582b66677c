// Puts every route of a /v1 plugin behind the caller gates; `bucket` names the shared rate limit.
import { Elysia } from "elysia";
import { v1Caller, type V1Gate } from "./caller.ts";

export const v1Gate = (gate: V1Gate, bucket: string) =>
  new Elysia({ name: "v1-gate", seed: bucket }).resolve({ as: "scoped" }, async ({ request, set }) => {
    const { caller, headers } = await v1Caller(gate, request.headers.get("authorization"), bucket);
    Object.assign(set.headers, headers);
    return { caller };
  });
