// GET /user (spec 4.11): outside /v1 and the subscription gate; the user record unwrapped.
import { Elysia } from "elysia";
import { userProbeCaller } from "../plugins/caller.ts";
import { presentUser } from "../presenters/user.ts";
import type { KeyResolver } from "../plugins/key-resolver.ts";

export const userRoutes = (keys: KeyResolver) =>
  new Elysia({ name: "user-routes" }).get("/user", async ({ request }) => presentUser(await userProbeCaller(keys, request.headers.get("authorization"))), {
    detail: { summary: "The user behind the API key", tags: ["User"] },
  });
