// GET /user (spec 4.11, 2.6): the user record unwrapped, outside the subscription gate.
import { beforeAll, describe, expect, test } from "bun:test";
import { useStack, type TestStack } from "../harness/stack.ts";
import { apiClient } from "../harness/http.ts";
import { createTenant, operatorClient } from "../harness/tenants.ts";

let stack: TestStack;
beforeAll(async () => {
  stack = await useStack();
});

describe("GET /user", () => {
  test("returns the user record itself, without credentials", async () => {
    const tenant = await createTenant(stack);
    const res = await apiClient(stack.baseUrl, tenant.token).get("/user");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("application/json");
    expect(Object.keys(res.body).sort()).toEqual(
      ["id", "name", "email", "email_verified_at", "current_account_id", "current_project_id", "created_at", "updated_at"].sort(),
    );
    expect(res.body.id).toBe(tenant.userId);
    expect(res.body.email).toBe(tenant.email);
    expect(res.body.current_account_id).toBe(tenant.accountId);
    expect(res.body.current_project_id).toBe(tenant.projectId);
    expect(res.body.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    expect(JSON.stringify(res.body)).not.toContain(tenant.token);
  });

  test("answers 200 for an account without a plan", async () => {
    const tenant = await createTenant(stack, { subscribed: false });
    const res = await apiClient(stack.baseUrl, tenant.token).get("/user");
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(tenant.userId);
  });

  test("401 with a plain message without a usable key", async () => {
    for (const authorization of [undefined, "Bearer", "Basic abc", "Bearer agk_unknownunknownunknownunknownunknownunknown1"]) {
      const res = await apiClient(stack.baseUrl).get("/user", { headers: authorization ? { authorization } : {} });
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ message: "Unauthenticated." });
    }
  });

  test("403 for a disabled user", async () => {
    const tenant = await createTenant(stack);
    await operatorClient(stack).disableUser({ userId: BigInt(tenant.userId) });
    const res = await apiClient(stack.baseUrl, tenant.token).get("/user");
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ message: "This account is unavailable." });
  });
});
