// Least privilege for team workloads: each role of PUBLIC_GRPC_WORKLOADS calls every method of the
// public gRPC API through the gateway's real gRPC port. What each role may call is written here,
// by hand, from the roles as docs/grpc.md states them (never read from the gateway's own table):
// a call its role allows reaches the operation, which answers exactly what it answers a key (a
// list, NOT_FOUND for an id that does not exist, INVALID_ARGUMENT for an empty input); any other
// is PERMISSION_DENIED naming the workload and the method, logged and counted. The requests
// change nothing: they name nothing that exists (deleting what is not there answers OK), or carry
// no valid input.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as grpc from "@grpc/grpc-js";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { startOwnGateway, type OwnGateway } from "../harness/own-gateway.ts";
import { eventually } from "../harness/eventually.ts";
import { closeClients, publicClients } from "../harness/public-grpc.ts";

const NOWHERE = "999999999";

type Role = "reader" | "writer" | "publisher";
const R = "reader", W = "writer", P = "publisher";

/** Every public method: its request (changing nothing), the code it answers when allowed, and the roles allowed it. */
const METHODS: { service: string; method: string; request: (t: Tenant) => object; answers: grpc.status; roles: Role[] }[] = [
  { service: "ArticleService", method: "GetArticle", request: () => ({ id: crypto.randomUUID() }), answers: grpc.status.NOT_FOUND, roles: [R, W, P] },
  { service: "ArticleService", method: "ListArticles", request: (t) => ({ project_id: String(t.projectId) }), answers: grpc.status.OK, roles: [R, W, P] },
  { service: "ArticleService", method: "GetArticleSteps", request: () => ({ id: crypto.randomUUID() }), answers: grpc.status.NOT_FOUND, roles: [R, W, P] },
  { service: "ArticleService", method: "WatchArticle", request: () => ({ id: crypto.randomUUID() }), answers: grpc.status.NOT_FOUND, roles: [R, W, P] },
  { service: "ArticleService", method: "EstimateArticle", request: () => ({}), answers: grpc.status.INVALID_ARGUMENT, roles: [R, W, P] },
  { service: "ArticleService", method: "CreateArticle", request: () => ({}), answers: grpc.status.INVALID_ARGUMENT, roles: [W] },
  { service: "ArticleService", method: "CancelArticle", request: () => ({ id: crypto.randomUUID() }), answers: grpc.status.NOT_FOUND, roles: [W] },
  { service: "ArticleService", method: "ListArticleVersions", request: () => ({ id: crypto.randomUUID() }), answers: grpc.status.NOT_FOUND, roles: [R, W, P] },
  { service: "ArticleService", method: "GetArticleVersion", request: () => ({ id: crypto.randomUUID(), version: 1 }), answers: grpc.status.NOT_FOUND, roles: [R, W, P] },
  { service: "ArticleService", method: "ExportArticleContent", request: () => ({ id: crypto.randomUUID(), format: "html" }), answers: grpc.status.NOT_FOUND, roles: [R, W, P] },
  { service: "ArticleService", method: "RetryArticle", request: () => ({ id: crypto.randomUUID() }), answers: grpc.status.NOT_FOUND, roles: [W] },
  { service: "ArticleService", method: "DeleteArticle", request: () => ({ id: crypto.randomUUID() }), answers: grpc.status.NOT_FOUND, roles: [W] },
  { service: "ArticleService", method: "RestoreArticleVersion", request: () => ({ id: crypto.randomUUID(), version: 1 }), answers: grpc.status.NOT_FOUND, roles: [W] },
  { service: "ArticleService", method: "UpdateArticle", request: () => ({ id: crypto.randomUUID(), base_version_id: "1", description: "x" }), answers: grpc.status.NOT_FOUND, roles: [W] },
  { service: "WorkflowService", method: "ListWorkflows", request: (t) => ({ project_id: String(t.projectId) }), answers: grpc.status.OK, roles: [R, W, P] },
  { service: "WorkflowService", method: "GetWorkflowStep", request: (t) => ({ project_id: String(t.projectId), step_id: NOWHERE }), answers: grpc.status.NOT_FOUND, roles: [R, W, P] },
  { service: "WorkflowService", method: "CreateWorkflowStep", request: (t) => ({ project_id: String(t.projectId) }), answers: grpc.status.INVALID_ARGUMENT, roles: [W] },
  { service: "WorkflowService", method: "UpdateWorkflowStep", request: (t) => ({ project_id: String(t.projectId), step_id: NOWHERE }), answers: grpc.status.NOT_FOUND, roles: [W] },
  { service: "WorkflowService", method: "DeleteWorkflowStep", request: (t) => ({ project_id: String(t.projectId), step_id: NOWHERE }), answers: grpc.status.NOT_FOUND, roles: [W] },
  { service: "WorkflowService", method: "ReorderWorkflowSteps", request: (t) => ({ project_id: String(t.projectId) }), answers: grpc.status.INVALID_ARGUMENT, roles: [W] },
  { service: "WorkflowService", method: "DuplicateWorkflow", request: (t) => ({ project_id: String(t.projectId) }), answers: grpc.status.INVALID_ARGUMENT, roles: [W] },
  { service: "PublishingService", method: "ListDestinations", request: (t) => ({ project_id: String(t.projectId) }), answers: grpc.status.OK, roles: [R, W, P] },
  { service: "PublishingService", method: "GetDestination", request: (t) => ({ project_id: String(t.projectId), destination_id: NOWHERE }), answers: grpc.status.NOT_FOUND, roles: [R, W, P] },
  { service: "PublishingService", method: "CheckDestination", request: (t) => ({ project_id: String(t.projectId), destination_id: NOWHERE }), answers: grpc.status.NOT_FOUND, roles: [P] },
  { service: "PublishingService", method: "CreateDestination", request: (t) => ({ project_id: String(t.projectId) }), answers: grpc.status.INVALID_ARGUMENT, roles: [P] },
  { service: "PublishingService", method: "DeleteDestination", request: (t) => ({ project_id: String(t.projectId), destination_id: NOWHERE }), answers: grpc.status.OK, roles: [P] },
  { service: "PublishingService", method: "PublishArticle", request: () => ({ id: crypto.randomUUID() }), answers: grpc.status.NOT_FOUND, roles: [P] },
];

let stack: TestStack;
let tenant: Tenant;
let gateway: OwnGateway;
const clients: Record<string, any> = {};

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  const grants = `team/reader=${tenant.accountId}:reader; team/writer=${tenant.accountId}:writer; team/publisher=*:publisher; team/one=${tenant.accountId}:GetArticle; team/both=${tenant.accountId}:writer,publisher`;
  // Warnings kept: the refusals' log lines.
  gateway = await startOwnGateway(stack, { PUBLIC_GRPC_WORKLOADS: grants, LOG_LEVEL: "warn" }, { metrics: true, keepLog: true });
  Object.assign(clients, publicClients(gateway.grpcPort));
}, 60_000);

afterAll(async () => {
  closeClients(clients);
  await gateway?.stop();
});

/** The status a workload's call answers (OK or the error's code and message). */
async function statusOf(workload: string, service: string, method: string, request: object, accountId = tenant.accountId, userId = tenant.userId) {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${await stack.identity.mint(workload)}`);
  metadata.set("x-account-id", String(accountId));
  metadata.set("x-user-id", String(userId));
  const client = clients[service];
  const deadline = Date.now() + 10_000;
  return new Promise<{ code: grpc.status; details: string }>((resolve) => {
    if (method === "WatchArticle") {
      const stream = client[method](request, metadata, { deadline });
      stream.on("data", () => {});
      stream.on("error", (error: grpc.ServiceError) => resolve({ code: error.code, details: error.details }));
      stream.on("end", () => resolve({ code: grpc.status.OK, details: "" }));
      return;
    }
    client[method](request, metadata, { deadline }, (error: grpc.ServiceError | null) => resolve(error ? { code: error.code, details: error.details } : { code: grpc.status.OK, details: "" }));
  });
}

describe("each role against each public method", () => {
  for (const role of ["reader", "writer", "publisher"] as const) {
    test(`${role}`, async () => {
      const workload = `team/${role}`;
      const outcomes: Record<string, string> = {};
      const expected: Record<string, string> = {};
      for (const m of METHODS) {
        const path = `articles.api.v1.${m.service}/${m.method}`;
        const { code, details } = await statusOf(workload, m.service, m.method, m.request(tenant));
        outcomes[m.method] = code === grpc.status.PERMISSION_DENIED ? `PERMISSION_DENIED ${details}` : grpc.status[code];
        expected[m.method] = m.roles.includes(role) ? grpc.status[m.answers] : `PERMISSION_DENIED Workload "${workload}" may not call ${path} for account ${tenant.accountId}.`;
      }
      expect(outcomes).toEqual(expected);
    }, 60_000);
  }
});

describe("grants", () => {
  test("a grant of one method allows that method alone", async () => {
    expect((await statusOf("team/one", "ArticleService", "GetArticle", { id: crypto.randomUUID() })).code).toBe(grpc.status.NOT_FOUND);
    const listed = await statusOf("team/one", "ArticleService", "ListArticles", { project_id: String(tenant.projectId) });
    expect(listed.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(listed.details).toBe(`Workload "team/one" may not call articles.api.v1.ArticleService/ListArticles for account ${tenant.accountId}.`);
  });

  test("a creation that would publish needs the grant of PublishArticle too: a writer alone is refused, a writer and publisher is not", async () => {
    const publishing = { article: { project_id: String(tenant.projectId), publish: { destination_id: "1" } } };
    const refused = await statusOf("team/writer", "ArticleService", "CreateArticle", publishing);
    expect(refused.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(refused.details).toBe(
      `Workload "team/writer" may not call articles.api.v1.ArticleService/CreateArticle this way for account ${tenant.accountId}: it would also do what articles.api.v1.PublishingService/PublishArticle does, which its grant does not allow.`,
    );
    // Past the grant, the incomplete creation meets the API's own validation.
    expect((await statusOf("team/both", "ArticleService", "CreateArticle", publishing)).code).toBe(grpc.status.INVALID_ARGUMENT);
    expect((await statusOf("team/writer", "ArticleService", "CreateArticle", { article: { project_id: String(tenant.projectId) } })).code).toBe(grpc.status.INVALID_ARGUMENT);
  });

  test("the acting user must be a member of the granted account", async () => {
    const other = await createTenant(stack);
    const refused = await statusOf("team/reader", "ArticleService", "ListArticles", {}, tenant.accountId, other.userId);
    expect(refused.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(refused.details).toBe(`Workload "team/reader" may not call articles.api.v1.ArticleService/ListArticles for user ${other.userId}: not a member of account ${tenant.accountId}.`);
    // A grant of every account lets the workload act for that account's own user.
    expect((await statusOf("team/publisher", "ArticleService", "ListArticles", {}, other.accountId, other.userId)).code).toBe(grpc.status.OK);
  });

  test("a refusal is logged and counted by workload and method", async () => {
    const method = "articles.api.v1.PublishingService/DeleteDestination";
    const logged = () => gateway.log().split("\n").filter((line) => line.includes('"call refused"') && line.includes('"team/reader"') && line.includes(method)).length;
    const [counted, linesBefore] = [await refusalsOf("team/reader", method), logged()];
    expect((await statusOf("team/reader", "PublishingService", "DeleteDestination", { project_id: String(tenant.projectId), destination_id: NOWHERE })).code).toBe(grpc.status.PERMISSION_DENIED);
    expect(await refusalsOf("team/reader", method)).toBe(counted + 1);
    await eventually(async () => logged(), (lines) => lines === linesBefore + 1, 5_000, "the refusal's log line");
  });
});

/** rpc_server_refused_total of a workload and method on the gateway's metrics port. */
async function refusalsOf(workload: string, method: string): Promise<number> {
  const metrics = await (await fetch(`http://127.0.0.1:${gateway.metricsPort}/metrics`)).text();
  const line = metrics.split("\n").find((l) => l.startsWith("rpc_server_refused_total{") && l.includes(`caller="${workload}"`) && l.includes(`rpc_method="${method}"`));
  return line ? Number(line.slice(line.lastIndexOf(" ") + 1)) : 0;
}
