// Authentication on /v1 (spec 5, 7): every refusal is 401 in the gate shape, and revocations,
// expiry, membership removal and subscription changes take effect within one second.
import { beforeAll, describe, expect, test } from "bun:test";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { useStack, type TestStack } from "../harness/stack.ts";
import { apiClient } from "../harness/http.ts";
import { Role } from "../../proto/gen/articles/accounts_billing/v1/operator_pb.ts";
import { addMemberWithKey, createProject, createTenant, operatorClient } from "../harness/tenants.ts";
import { withinPromise } from "../harness/waits.ts";

const UNAUTHENTICATED = { error: "Unauthenticated", message: "Unauthenticated.", code: "UNAUTHENTICATED" };

/** Polls until the status is the expected one; fails unless that happens within one second. */
async function withinOneSecond(request: () => Promise<{ status: number; body: unknown }>, status: number) {
  const deadline = Date.now() + 1000;
  let last = await request();
  while (last.status !== status && Date.now() < deadline) {
    await Bun.sleep(50);
    last = await request();
  }
  expect(last.status).toBe(status);
  return last;
}

let stack: TestStack;
beforeAll(async () => {
  stack = await useStack();
});

describe("401 on /v1", () => {
  test("missing, malformed and unknown keys", async () => {
    const headers: Record<string, string>[] = [{}, { authorization: "Bearer" }, { authorization: "Token abc" }, { authorization: "Bearer not-a-key" }, { authorization: "Bearer agk_0000000000000000000000000000000000000000000" }];
    for (const h of headers) {
      const res = await apiClient(stack.baseUrl).get("/v1/articles", { headers: h });
      expect(res.status).toBe(401);
      expect(res.body).toEqual(UNAUTHENTICATED);
    }
  });

  test("a revoked key stops working within one second", async () => {
    const tenant = await createTenant(stack);
    const api = apiClient(stack.baseUrl, tenant.token);
    expect((await api.get("/v1/articles")).status).toBe(200);
    await operatorClient(stack).revokeApiKey({ keyId: BigInt(tenant.keyId) });
    const res = await withinOneSecond(() => api.get("/v1/articles"), 401);
    expect(res.body).toEqual(UNAUTHENTICATED);
  });

  test("an expired key is refused within one second of its expiry", async () => {
    const tenant = await createTenant(stack);
    const expiresAt = Date.now() + 3000;
    const { key, token } = await operatorClient(stack).createApiKey({
      accountId: BigInt(tenant.accountId),
      userId: BigInt(tenant.userId),
      expiresAt: timestampFromDate(new Date(expiresAt)),
    });
    expect(key!.expiresAt).toBeDefined();
    const api = apiClient(stack.baseUrl, token);
    // Accepted before it expires (asked well before, so this is not a race with the expiry).
    const askedAt = Date.now();
    expect((await api.get("/v1/articles")).status).toBe(200);
    expect(askedAt).toBeLessThan(expiresAt);
    // The passage of time the promise is about: the key's own expiry, then at most one second.
    await Bun.sleep(Math.max(0, expiresAt - Date.now()));
    const refused = await withinPromise(1000, () => api.get("/v1/articles"), (res) => res.status === 401, "refusing the expired key", expiresAt);
    expect(refused.body).toEqual(UNAUTHENTICATED);
  });

  test("a key stops working when its creator leaves the account", async () => {
    const tenant = await createTenant(stack);
    const editor = await addMemberWithKey(stack, tenant, "editor");
    const api = apiClient(stack.baseUrl, editor.token);
    expect((await api.get("/v1/articles")).status).toBe(200);
    await operatorClient(stack).removeMember({ accountId: BigInt(tenant.accountId), userId: BigInt(editor.userId) });
    await withinOneSecond(() => api.get("/v1/articles"), 401);
  });

  test("a narrowed membership loses a project within one second, while the key keeps working", async () => {
    const tenant = await createTenant(stack);
    const member = await addMemberWithKey(stack, tenant, "editor");
    const api = apiClient(stack.baseUrl, member.token);
    const created = await api.post("/v1/articles", { project_id: tenant.projectId, title: "Kept in view", article_type: "blog_post", target_word_count: 300, tone: "friendly", point_of_view: "second_person", language: "en" });
    expect(created.status).toBe(201);
    // Polled and listed while access holds, so any remembered answer is as fresh as it can be.
    for (let i = 0; i < 5; i++) expect((await api.get(`/v1/articles/${created.body.data.id}`)).status).toBe(200);
    const listed = async () => ((await api.get("/v1/articles")).body.data as { id: number }[]).map((a) => a.id);
    expect(await listed()).toContain(created.body.data.id);
    const other = await createProject(stack, tenant.accountId);
    await operatorClient(stack).addMember({ accountId: BigInt(tenant.accountId), userId: BigInt(member.userId), role: Role.VIEWER, projectIds: [BigInt(other)] });
    const narrowedAt = Date.now();
    const refused = await withinOneSecond(() => api.get(`/v1/articles/${created.body.data.id}`), 403);
    // The all-projects listing drops the project within the same second.
    while ((await listed()).includes(created.body.data.id) && Date.now() < narrowedAt + 1000) await Bun.sleep(50);
    expect(await listed()).not.toContain(created.body.data.id);
    expect((refused.body as { message: string }).message).toBeString();
    // A viewer of the other project: it may read there but no longer create.
    expect((await api.get(`/v1/articles?project_id=${other}`)).status).toBe(200);
    await withinOneSecond(() => api.post("/v1/articles", { project_id: other, title: "Not any more", article_type: "blog_post", target_word_count: 300, tone: "friendly", point_of_view: "second_person", language: "en" }), 403);
  });

  test("the token never appears in what the service stores or answers", async () => {
    const tenant = await createTenant(stack);
    const res = await apiClient(stack.baseUrl, tenant.token).get("/user");
    expect(JSON.stringify(res.body)).not.toContain(tenant.token);
    const postgres = (await import("postgres")).default;
    const sql = postgres(stack.databaseUrl, { max: 1 });
    const rows = await sql`select token_hash, prefix from accounts_billing.api_keys where id = ${tenant.keyId}`;
    await sql.end();
    expect(rows[0].token_hash).not.toContain(tenant.token);
    expect(tenant.token.startsWith(rows[0].prefix)).toBe(true);
    expect(rows[0].prefix.length).toBeLessThan(tenant.token.length / 2);
  });
});

describe("403 for a disabled user", () => {
  test("on /v1 with the plain message, within one second of disabling", async () => {
    const tenant = await createTenant(stack);
    const api = apiClient(stack.baseUrl, tenant.token);
    expect((await api.get("/v1/articles")).status).toBe(200);
    await operatorClient(stack).disableUser({ userId: BigInt(tenant.userId) });
    const res = await withinOneSecond(() => api.get("/v1/articles"), 403);
    expect(res.body).toEqual({ message: "This account is unavailable." });
  });
});

describe("402 without an active subscription", () => {
  test("every /v1 endpoint answers NO_ACTIVE_SUBSCRIPTION; /user is exempt", async () => {
    const tenant = await createTenant(stack, { subscribed: false });
    const api = apiClient(stack.baseUrl, tenant.token);
    for (const [method, path] of [
      ["GET", "/v1/articles"],
      ["POST", "/v1/articles"],
      ["GET", "/v1/articles/1"],
      ["GET", `/v1/projects/${tenant.projectId}/workflows`],
      ["POST", `/v1/projects/${tenant.projectId}/workflows/reorder`],
    ]) {
      const res = method === "GET" ? await api.get(path) : await api.post(path, {});
      expect(res.status).toBe(402);
      expect(res.body.code).toBe("NO_ACTIVE_SUBSCRIPTION");
      expect(typeof res.body.error).toBe("string");
      expect(typeof res.body.message).toBe("string");
    }
    expect((await api.get("/user")).status).toBe(200);
  });

  test("ending and restarting a subscription take effect within one second", async () => {
    const tenant = await createTenant(stack);
    const api = apiClient(stack.baseUrl, tenant.token);
    expect((await api.get("/v1/articles")).status).toBe(200);
    await operatorClient(stack).unsubscribe({ accountId: BigInt(tenant.accountId) });
    await withinOneSecond(() => api.get("/v1/articles"), 402);
    await operatorClient(stack).subscribe({ accountId: BigInt(tenant.accountId), planId: BigInt(tenant.planId) });
    await withinOneSecond(() => api.get("/v1/articles"), 200);
  });
});

describe("every response is JSON", () => {
  test("unknown routes are 404 JSON", async () => {
    const tenant = await createTenant(stack);
    for (const path of ["/nope", "/v1/nope", "/v2/articles"]) {
      const res = await apiClient(stack.baseUrl, tenant.token).get(path);
      expect(res.status).toBe(404);
      expect(res.headers.get("content-type")).toContain("application/json");
      expect(typeof res.body.message).toBe("string");
    }
  });
});
