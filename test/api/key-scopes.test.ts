// Keys narrowed by a scope, over HTTP and the public gRPC API, for a user on two accounts. A key
// without a scope reaches both accounts as the spec says (its writes into the other charged to its
// own account); a key scoped to its account, or to a project of it, gets 404 (NOT_FOUND) for every
// request naming anything else, by numeric id and external_id alike, and lists hold none of it; a
// read-only key gets 403 (PERMISSION_DENIED) for every write where it reaches and 404 where it does
// not. Nothing is created, reserved, cancelled or published by any refused request. The operator
// CLI creates each kind and lists keys with their scopes.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as grpc from "@grpc/grpc-js";
import { runAdmin } from "../harness/admin-cli.ts";
import { apiClient } from "../harness/http.ts";
import { closeClients, publicClients, type PublicClients } from "../harness/public-grpc.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createProject, operatorClient } from "../harness/tenants.ts";
import { articleBody, wordUsage } from "./generation-support.ts";
import {
  footprint,
  grpcAnswers,
  grpcNotFound,
  grpcOutcome,
  grpcRequests,
  heldRecords,
  httpAnswers,
  httpNotFound,
  httpRequests,
  listedIds,
  userOnTwoAccounts,
  type Records,
  type TwoAccounts,
} from "./reach-support.ts";

let stack: TestStack;
let t: TwoAccounts;
let clients: PublicClients;
/** Records of home's own project, and of another project of home. */
let homeRecords: Records;
let homeOther: Records;

beforeAll(async () => {
  stack = await useStack();
  t = await userOnTwoAccounts(stack);
  homeRecords = await heldRecords(stack, t.home.token, t.home.accountId, t.home.projectId);
  homeOther = await heldRecords(stack, t.home.token, t.home.accountId, await createProject(stack, t.home.accountId, "Home's other project"));
  clients = publicClients(Number(new URL(stack.publicGrpcUrl).port));
}, 60_000);

afterAll(() => closeClients(clients));

interface Scope {
  accountOnly?: boolean;
  projectIds?: number[];
  readOnly?: boolean;
}

/** A key of `userId` on home, with a scope. */
async function key(scope: Scope, userId = t.userId): Promise<string> {
  const { token } = await operatorClient(stack).createApiKey({
    accountId: BigInt(t.home.accountId),
    userId: BigInt(userId),
    scope: { accountOnly: scope.accountOnly ?? false, projectIds: (scope.projectIds ?? []).map(BigInt), readOnly: scope.readOnly ?? false },
  });
  return token;
}

const bearer = (token: string) => async () => {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${token}`);
  return metadata;
};

const accounts = () => [t.home.accountId, t.away.accountId];

/** Every request naming the records answers 404 / NOT_FOUND to the key, and nothing changes. */
async function expectOutOfReach(token: string, records: Records) {
  const before = await footprint(stack, records, accounts());
  const http = httpRequests(records);
  expect(await httpAnswers(stack.baseUrl, token, http)).toEqual(httpNotFound(http));
  const rpc = grpcRequests(records);
  expect(await grpcAnswers(clients, bearer(token), rpc)).toEqual(grpcNotFound(rpc));
  expect(await footprint(stack, records, accounts())).toEqual(before);
  // Lists hold none of the records: all projects, and the project by id (NOT_FOUND or nothing listed).
  const api = apiClient(stack.baseUrl, token);
  const all = await api.get("/v1/articles?per_page=100");
  expect(all.status).toBe(200);
  expect(all.body.data.map((a: any) => a.external_id)).not.toContain(records.article.external_id);
  const one = await api.get(`/v1/articles?project_id=${records.projectId}`);
  expect(one.status === 404 || (one.status === 200 && one.body.data.length === 0)).toBe(true);
  const listed = await grpcOutcome(clients, "ArticleService", "ListArticles", {}, await bearer(token)());
  expect(listed.code).toBe("OK");
  expect(listedIds(listed.reply)).not.toContain(records.article.external_id);
}

/** The records are read as before. */
async function expectReadable(token: string, records: Records) {
  const api = apiClient(stack.baseUrl, token);
  for (const id of [records.article.id, records.article.external_id]) expect((await api.get(`/v1/articles/${id}`)).status).toBe(200);
  expect((await api.get(`/v1/projects/${records.projectId}/workflows`)).status).toBe(200);
  expect((await grpcOutcome(clients, "ArticleService", "GetArticle", { id: records.article.external_id }, await bearer(token)())).code).toBe("OK");
}

const HTTP_READS = new Set(["GET"]);
const isGrpcRead = (method: string) => /^(Get|List|Watch)/.test(method);

describe("a key without a scope", () => {
  test("reaches both accounts, and a creation into the other account is charged to the key's own", async () => {
    await expectReadable(t.home.token, t.awayRecords);
    const api = apiClient(stack.baseUrl, t.home.token);
    const listed = await api.get("/v1/articles?per_page=100");
    expect(listed.body.data.map((a: any) => a.external_id)).toContain(t.awayRecords.article.external_id);
    const [home, away] = [await wordUsage(stack, t.home.accountId), await wordUsage(stack, t.away.accountId)];
    const created = await api.post("/v1/articles", articleBody(t.away.projectId, { article_type: t.awayRecords.heldType, target_word_count: 100 }));
    expect(created.status).toBe(201);
    expect(Number((await wordUsage(stack, t.home.accountId)).reservedWords)).toBe(Number(home.reservedWords) + 120);
    expect((await wordUsage(stack, t.away.accountId)).reservedWords).toBe(away.reservedWords);
    expect((await api.post(`/v1/articles/${created.body.data.external_id}/cancel`)).status).toBe(200);
  });
});

describe("a key scoped to its account", () => {
  test("answers 404 for every request naming the other account's records, and reaches its own", async () => {
    const token = await key({ accountOnly: true });
    await expectOutOfReach(token, t.awayRecords);
    await expectReadable(token, homeRecords);
  }, 60_000);

  test("of a user who only views the other account: 404 there too, never 403", async () => {
    await expectOutOfReach(await key({ accountOnly: true }, t.viewerId), t.awayRecords);
  }, 60_000);
});

describe("a key scoped to a project", () => {
  test("answers 404 for its account's other projects and the other account's, and reaches its project", async () => {
    const token = await key({ projectIds: [t.home.projectId] });
    await expectOutOfReach(token, homeOther);
    await expectOutOfReach(token, t.awayRecords);
    await expectReadable(token, homeRecords);
  }, 90_000);
});

describe("a read-only key", () => {
  test("reads both accounts and answers 403 for every write, changing nothing", async () => {
    const token = await key({ readOnly: true });
    for (const records of [homeRecords, t.awayRecords]) {
      await expectReadable(token, records);
      const before = await footprint(stack, records, accounts());
      const http = httpRequests(records).filter(([, method]) => !HTTP_READS.has(method));
      const refused = Object.fromEntries(http.map(([label]) => [label, { status: 403, body: { message: "This key is read-only." } }]));
      expect(await httpAnswers(stack.baseUrl, token, http)).toEqual(refused);
      const rpc = grpcRequests(records).filter(([, , method]) => !isGrpcRead(method));
      expect(await grpcAnswers(clients, bearer(token), rpc)).toEqual(Object.fromEntries(rpc.map(([label]) => [label, "PERMISSION_DENIED This key is read-only."])));
      expect(await footprint(stack, records, accounts())).toEqual(before);
    }
  }, 90_000);

  test("scoped to its account as well: 404 for the other account, 403 for writes on its own", async () => {
    const token = await key({ accountOnly: true, readOnly: true });
    await expectOutOfReach(token, t.awayRecords);
    const create = await apiClient(stack.baseUrl, token).post("/v1/articles", articleBody(t.home.projectId));
    expect([create.status, create.body.message]).toEqual([403, "This key is read-only."]);
  }, 60_000);
});

describe("the operator CLI", () => {
  test("creates scoped keys, lists keys with their scopes and never a token, and refuses a scope beyond the account", async () => {
    const admin = (...args: string[]) => runAdmin(stack, ...args);
    const account = String(t.home.accountId);
    const user = String(t.userId);
    const scoped = await admin("key", "create", "--account", account, "--user", user, "--scope", "account", "--read-only");
    expect(scoped.code).toBe(0);
    expect(scoped.json.scope).toEqual({ account_only: true, project_ids: [], read_only: true });
    const projects = await admin("key", "create", "--account", account, "--user", user, "--projects", `${t.home.projectId}`);
    expect(projects.json.scope).toEqual({ account_only: false, project_ids: [t.home.projectId], read_only: false });
    // The CLI's key is narrowed as the scope says.
    expect((await apiClient(stack.baseUrl, scoped.json.token).get(`/v1/articles/${t.awayRecords.article.id}`)).status).toBe(404);
    expect((await apiClient(stack.baseUrl, projects.json.token).get(`/v1/articles/${homeOther.article.id}`)).status).toBe(404);

    const listed = await admin("key", "list", "--account", account);
    expect(listed.code).toBe(0);
    const byId = new Map(listed.json.map((k: any) => [k.id, k]));
    expect((byId.get(scoped.json.id) as any).scope).toEqual(scoped.json.scope);
    expect((byId.get(t.home.keyId) as any).scope).toBeNull();
    expect(listed.stdout).not.toContain(scoped.json.token);
    expect(listed.json.every((k: any) => !("token" in k) && !("token_hash" in k))).toBe(true);

    const foreign = await admin("key", "create", "--account", account, "--user", user, "--projects", `${t.away.projectId}`);
    expect(foreign.code).toBe(1);
    expect(JSON.parse(foreign.stderr).errors).toEqual({ "scope.project_ids": [`Projects ${t.away.projectId} do not belong to account ${account}.`] });
    const both = await admin("key", "create", "--account", account, "--user", user, "--scope", "account", "--projects", `${t.home.projectId}`);
    expect(JSON.parse(both.stderr).errors).toEqual({ "scope.project_ids": ["A key is scoped to its account or to projects of it, not both."] });
    const unknown = await admin("key", "create", "--account", account, "--user", user, "--scope", "project");
    expect(unknown.code).toBe(2);
  }, 60_000);
});
