// GET /v1/usage: the account's words this month from the ledger, per day and hour, by project and
// key, and its rate-limit windows (usage/usage-operations.ts). Its own rate-limit bucket.
import { Elysia } from "elysia";
import type { V1Gate } from "../plugins/caller.ts";
import { v1Gate } from "../plugins/v1-gate.ts";
import type { UsageOperations } from "../usage/usage-operations.ts";

export const usageRoutes = (gate: V1Gate, usage: UsageOperations) =>
  new Elysia({ name: "usage-routes" })
    .use(v1Gate(gate, "usage"))
    .get("/v1/usage", async ({ caller }) => ({ success: true, data: await usage.report(caller) }), {
      detail: { summary: "The account's words this month (allowance, settled, reserved, remaining), per day and per hour by project and key, and its rate-limit windows", tags: ["Usage"] },
    });
