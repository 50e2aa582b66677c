// A user on two accounts, and every request of the public API that names a project or an article
// of one of them, over HTTP and gRPC: what the reach tests (keys narrowed by a scope, team
// workloads bounded by their grant) ask of a caller that must not reach the other account. Each
// such request answers 404 (NOT_FOUND) in the spec's shape, whatever the caller's role there, and
// changes nothing: no article, word reservation, workflow step or destination appears, and the
// record stays as it was.
import * as grpc from "@grpc/grpc-js";
import { Role } from "../../proto/gen/articles/accounts_billing/v1/operator_pb.ts";
import { createArticle } from "../harness/articles.ts";
import { eventually } from "../harness/eventually.ts";
import { apiClient, call } from "../harness/http.ts";
import type { PublicClients } from "../harness/public-grpc.ts";
import type { TestStack } from "../harness/stack.ts";
import { createTenant, operatorClient, type Tenant } from "../harness/tenants.ts";
import { articleBody, createWorkflow, marker, wordUsage } from "./generation-support.ts";

const NOWHERE = "999999999";

/** A project with a workflow step and an article held writing (its step waits far longer than any test). */
export interface Records {
  accountId: number;
  projectId: number;
  article: { id: number; external_id: string };
  stepId: number;
  /** The article type of the held workflow. */
  heldType: string;
  /** A key of the account's owner, to look at the records from inside. */
  ownerToken: string;
}

export async function heldRecords(stack: TestStack, ownerToken: string, accountId: number, projectId: number): Promise<Records> {
  const api = apiClient(stack.baseUrl, ownerToken);
  const heldType = marker("held");
  const [step] = await createWorkflow(api, projectId, heldType, [{ user: "[[sim:sleep=600000]]hold" }]);
  const article = await createArticle(api, articleBody(projectId, { article_type: heldType }));
  // Held in its step before anything is compared, so a run taking it up later is not read as a change.
  await eventually(async () => (await api.get(`/v1/articles/${article.id}`)).body.data.status, (status) => status === "writing", 30_000, "the held article writing");
  return { accountId, projectId, article: { id: article.id, external_id: article.external_id }, stepId: step.id, heldType, ownerToken };
}

/** One user who owns `home` and is an owner on `away` too; a second who owns `home` and only views `away`. */
export interface TwoAccounts {
  home: Tenant;
  away: Tenant;
  /** The user on both accounts (home's owner, an owner on away too). */
  userId: number;
  /** Another owner of home who is only a viewer on away: its refusals there would be 403 without the reach. */
  viewerId: number;
  /** Records of away's project. */
  awayRecords: Records;
}

export async function userOnTwoAccounts(stack: TestStack): Promise<TwoAccounts> {
  const op = operatorClient(stack);
  const [home, away] = [await createTenant(stack), await createTenant(stack)];
  await op.addMember({ accountId: BigInt(away.accountId), userId: BigInt(home.userId), role: Role.OWNER });
  const { user: viewer } = await op.createUser({ name: "Viewer away", email: `viewer-${marker()}@example.com` });
  await op.addMember({ accountId: BigInt(home.accountId), userId: viewer!.id, role: Role.OWNER });
  await op.addMember({ accountId: BigInt(away.accountId), userId: viewer!.id, role: Role.VIEWER });
  return { home, away, userId: home.userId, viewerId: Number(viewer!.id), awayRecords: await heldRecords(stack, away.token, away.accountId, away.projectId) };
}

/** What must not change while a caller asks for the records: the project's articles, steps, destinations, the article, and each account's words. */
export async function footprint(stack: TestStack, r: Records, accountIds: number[]) {
  const owner = apiClient(stack.baseUrl, r.ownerToken);
  const [articles, workflows, destinations, article] = await Promise.all([
    owner.get(`/v1/articles?project_id=${r.projectId}`),
    owner.get(`/v1/projects/${r.projectId}/workflows`),
    owner.get(`/v1/projects/${r.projectId}/destinations`),
    owner.get(`/v1/articles/${r.article.id}`),
  ]);
  const words = async (accountId: number) => {
    const u = await wordUsage(stack, accountId);
    return { accountId, reserved: Number(u.reservedWords), used: Number(u.usedWords) };
  };
  return {
    articles: articles.body.meta.total,
    workflows: JSON.stringify(workflows.body.data),
    destinations: destinations.body.data.length,
    status: article.body.data.status,
    words: await Promise.all(accountIds.map(words)),
  };
}

/** Every /v1 request naming the records' project, article or step: [label, method, path, body]. */
export function httpRequests(t: Records): [string, string, string, unknown?][] {
  const p = `/v1/projects/${t.projectId}`;
  const creation = articleBody(t.projectId);
  const out: [string, string, string, unknown?][] = [];
  for (const id of [String(t.article.id), t.article.external_id]) {
    out.push([`read ${id}`, "GET", `/v1/articles/${id}`], [`steps ${id}`, "GET", `/v1/articles/${id}/steps`], [`events ${id}`, "GET", `/v1/articles/${id}/events`]);
    out.push([`cancel ${id}`, "POST", `/v1/articles/${id}/cancel`], [`publish ${id}`, "POST", `/v1/articles/${id}/publish`, { destination_id: 1 }]);
  }
  out.push(
    ["create", "POST", "/v1/articles", creation],
    ["estimate", "POST", "/v1/articles/estimate", creation],
    ["workflows", "GET", `${p}/workflows`],
    ["step", "GET", `${p}/workflows/${t.stepId}`],
    ["add step", "POST", `${p}/workflows`, { article_type: "blog_post", step_number: 9, step_name: "More", system: "", user: "more", output_format: "markdown" }],
    ["change step", "PATCH", `${p}/workflows/${t.stepId}`, { step_name: "Changed" }],
    ["replace step", "PUT", `${p}/workflows/${t.stepId}`, { step_name: "Changed" }],
    ["delete step", "DELETE", `${p}/workflows/${t.stepId}`],
    ["reorder", "POST", `${p}/workflows/reorder`, { steps: [{ id: t.stepId, step_number: 1 }] }],
    ["duplicate", "POST", `${p}/workflows/duplicate`, { source_article_type: "blog_post", new_article_type: "copy" }],
    ["destinations", "GET", `${p}/destinations`],
    ["destination", "GET", `${p}/destinations/${NOWHERE}`],
    ["add destination", "POST", `${p}/destinations`, { kind: "wordpress", name: "Site", site_url: "https://example.com", username: "u", application_password: "p" }],
    ["check destination", "POST", `${p}/destinations/${NOWHERE}/check`],
    ["delete destination", "DELETE", `${p}/destinations/${NOWHERE}`],
  );
  return out;
}

/** Each /v1 request's status and body, by label. */
export async function httpAnswers(baseUrl: string, token: string, requests: [string, string, string, unknown?][]) {
  const answers: Record<string, { status: number; body: unknown }> = {};
  for (const [label, method, path, body] of requests) {
    const res = await call(baseUrl, method, path, { token, body });
    answers[label] = { status: res.status, body: res.status === 404 || res.status === 403 ? res.body : "…" };
  }
  return answers;
}

/** What every /v1 request of `httpRequests` answers a caller that does not reach the records: 404, the article's or the project's. */
export const httpNotFound = (requests: [string, string, string, unknown?][]) =>
  Object.fromEntries(requests.map(([label, , path]) => [label, { status: 404, body: { message: /^\/v1\/articles\/[^/]+/.test(path) && !path.endsWith("estimate") ? "Article not found." : "Project not found." } }]));

/** Every gRPC method naming the records' project, article or step: [label, service, method, request]. */
export function grpcRequests(t: Records): [string, keyof PublicClients, string, object][] {
  const project_id = String(t.projectId);
  const article = { project_id, title: "Dialing in espresso", article_type: "blog_post", target_word_count: 100, tone: "friendly", point_of_view: "second_person", language: "en" };
  const out: [string, keyof PublicClients, string, object][] = [];
  for (const id of [String(t.article.id), t.article.external_id]) {
    out.push([`GetArticle ${id}`, "ArticleService", "GetArticle", { id }], [`GetArticleSteps ${id}`, "ArticleService", "GetArticleSteps", { id }], [`WatchArticle ${id}`, "ArticleService", "WatchArticle", { id }]);
    out.push([`CancelArticle ${id}`, "ArticleService", "CancelArticle", { id }], [`PublishArticle ${id}`, "PublishingService", "PublishArticle", { id, publish: { destination_id: "1" } }]);
  }
  const step_id = String(t.stepId);
  out.push(
    ["CreateArticle", "ArticleService", "CreateArticle", { article, idempotency_key: crypto.randomUUID() }],
    ["EstimateArticle", "ArticleService", "EstimateArticle", { article }],
    ["ListWorkflows", "WorkflowService", "ListWorkflows", { project_id }],
    ["GetWorkflowStep", "WorkflowService", "GetWorkflowStep", { project_id, step_id }],
    ["CreateWorkflowStep", "WorkflowService", "CreateWorkflowStep", { project_id, step: { article_type: "blog_post", step_number: 9, step_name: "More", user: "more" } }],
    ["UpdateWorkflowStep", "WorkflowService", "UpdateWorkflowStep", { project_id, step_id, changes: { step_name: "Changed" } }],
    ["DeleteWorkflowStep", "WorkflowService", "DeleteWorkflowStep", { project_id, step_id }],
    ["ReorderWorkflowSteps", "WorkflowService", "ReorderWorkflowSteps", { project_id, steps: [{ id: step_id, step_number: 1 }] }],
    ["DuplicateWorkflow", "WorkflowService", "DuplicateWorkflow", { project_id, source_article_type: "blog_post", new_article_type: "copy" }],
    ["ListDestinations", "PublishingService", "ListDestinations", { project_id }],
    ["GetDestination", "PublishingService", "GetDestination", { project_id, destination_id: NOWHERE }],
    ["CreateDestination", "PublishingService", "CreateDestination", { project_id, destination: { name: "Site", site_url: "https://example.com" } }],
    ["CheckDestination", "PublishingService", "CheckDestination", { project_id, destination_id: NOWHERE }],
    ["DeleteDestination", "PublishingService", "DeleteDestination", { project_id, destination_id: NOWHERE }],
  );
  return out;
}

/** A call's outcome: OK with its reply, or the error's code name and message. */
export function grpcOutcome(clients: PublicClients, service: keyof PublicClients, method: string, request: object, metadata: grpc.Metadata): Promise<{ code: string; details: string; reply?: any }> {
  const deadline = Date.now() + 10_000;
  return new Promise((resolve) => {
    const failed = (error: grpc.ServiceError) => resolve({ code: grpc.status[error.code], details: error.details });
    if (method === "WatchArticle") {
      const stream = clients[service][method](request, metadata, { deadline });
      // A stream that opens is let through: stop it at its first message.
      stream.on("data", () => {
        resolve({ code: "OK", details: "" });
        stream.cancel();
      });
      stream.on("error", (error: grpc.ServiceError) => (error.code === grpc.status.CANCELLED ? undefined : failed(error)));
      stream.on("end", () => resolve({ code: "OK", details: "" }));
      return;
    }
    clients[service][method](request, metadata, { deadline }, (error: grpc.ServiceError | null, reply: any) => (error ? failed(error) : resolve({ code: "OK", details: "", reply })));
  });
}

/** Each gRPC request's code and message, by label. */
export async function grpcAnswers(clients: PublicClients, metadata: () => Promise<grpc.Metadata>, requests: [string, keyof PublicClients, string, object][]) {
  const answers: Record<string, string> = {};
  for (const [label, service, method, request] of requests) {
    const { code, details } = await grpcOutcome(clients, service, method, request, await metadata());
    answers[label] = `${code} ${details}`;
  }
  return answers;
}

/** What every gRPC request of `grpcRequests` answers a caller that does not reach the records: NOT_FOUND, the article's or the project's. */
export const grpcNotFound = (requests: [string, keyof PublicClients, string, object][]) =>
  Object.fromEntries(requests.map(([label, , method]) => [label, ["GetArticle", "GetArticleSteps", "WatchArticle", "CancelArticle", "PublishArticle"].includes(method) ? "NOT_FOUND Article not found." : "NOT_FOUND Project not found."]));

/** The article ids a list holds (grpc-js leaves an empty list out of the reply). */
export const listedIds = (reply: any): string[] => (reply?.articles ?? []).map((a: any) => a.external_id);
