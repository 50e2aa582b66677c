// Internal teams' article API over gRPC (articles.api.v1.ArticleService on the gateway's gRPC
// port), called as a team would: a stock @grpc/grpc-js client loading the .proto files, an API
// key in the metadata. It must apply exactly what /v1 applies: the word reservation and its
// release, idempotency, the shared rate limit, field checks and access, with Google's standard
// error details.
import { beforeAll, describe, expect, test } from "bun:test";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { anyUnpack } from "@bufbuild/protobuf/wkt";
import { fromBinary } from "@bufbuild/protobuf";
import { StatusSchema } from "../../proto/gen/google/rpc/status_pb.ts";
import { BadRequestSchema, ErrorInfoSchema, RetryInfoSchema } from "../../proto/gen/google/rpc/error_details_pb.ts";
import { apiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { addMemberWithKey, createProject, createTenant, type Tenant } from "../harness/tenants.ts";
import { eventually } from "../harness/eventually.ts";
import { createWorkflow, marker, wordUsage } from "./generation-support.ts";
import { openEvents } from "./article-events-support.ts";

const protoRoot = fileURLToPath(new URL("../../proto", import.meta.url));

let stack: TestStack;
let articles: any;
let workflows: any;

beforeAll(async () => {
  stack = await useStack();
  const definition = protoLoader.loadSync("articles/api/v1/articles.proto", { includeDirs: [protoRoot], keepCase: true, longs: String, enums: String, defaults: false, oneofs: true });
  const pkg: any = grpc.loadPackageDefinition(definition);
  articles = new pkg.articles.api.v1.ArticleService(new URL(stack.publicGrpcUrl).host, grpc.credentials.createInsecure());
  const workflowDefinition = protoLoader.loadSync("articles/api/v1/workflows.proto", { includeDirs: [protoRoot], keepCase: true, longs: String, enums: String, defaults: false, oneofs: true });
  workflows = new (grpc.loadPackageDefinition(workflowDefinition) as any).articles.api.v1.WorkflowService(new URL(stack.publicGrpcUrl).host, grpc.credentials.createInsecure());
});

const keyed = (token: string) => {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${token}`);
  return metadata;
};

const callOn = (client: () => any) => (method: string, request: object, token: string) =>
  new Promise<any>((resolve, reject) => client()[method](request, keyed(token), { deadline: Date.now() + 10_000 }, (error: grpc.ServiceError | null, reply: any) => (error ? reject(error) : resolve(reply))));
const refusalOn = (client: () => any) => (method: string, request: object, token: string) =>
  callOn(client)(method, request, token).then(() => { throw new Error(`${method} was not refused`); }, (error: grpc.ServiceError) => error);
const call = callOn(() => articles);
const refusal = refusalOn(() => articles);
const workflowCall = callOn(() => workflows);
const workflowRefusal = refusalOn(() => workflows);

/** The google.rpc.Status a refusal carries in its grpc-status-details-bin trailer, with its details unpacked. */
function detailsOf(error: grpc.ServiceError) {
  const [bytes] = error.metadata.get("grpc-status-details-bin") as Buffer[];
  const status = fromBinary(StatusSchema, bytes!);
  const unpack = <T,>(schema: Parameters<typeof anyUnpack>[1]) => status.details.map((d) => anyUnpack(d, schema)).find(Boolean) as T | undefined;
  return {
    status,
    badRequest: unpack<{ fieldViolations: { field: string; description: string }[] }>(BadRequestSchema),
    errorInfo: unpack<{ reason: string }>(ErrorInfoSchema),
    retryInfo: unpack<{ retryDelay?: { seconds: bigint } }>(RetryInfoSchema),
  };
}

const article = (tenant: Tenant, extra: object = {}) => ({
  project_id: String(tenant.projectId),
  title: "Choosing a coffee grinder",
  article_type: "blog_post",
  target_word_count: 150,
  tone: "friendly",
  point_of_view: "second_person",
  language: "en",
  ...extra,
});

/** A one-step custom workflow whose step takes `sleepMs`, so an article stays running that long. */
async function slowType(tenant: Tenant, sleepMs: number): Promise<string> {
  const type = marker("grpc");
  await createWorkflow(apiClient(stack.baseUrl, tenant.token), tenant.projectId, type, [{ step_name: "Slow", user: `[[sim:sleep=${sleepMs}]][[sim:words=30]] ${type}` }]);
  return type;
}

describe("ArticleService over a stock grpc-js client", () => {
  test("creates an article as /v1 does: reserved words, the same record over HTTP, a replay for the same idempotency key", async () => {
    const tenant = await createTenant(stack);
    // A step that runs for a while, so the reservation is still held (not yet settled) when it is read.
    const type = await slowType(tenant, 20_000);
    const key = crypto.randomUUID();
    const created = await call("CreateArticle", { article: article(tenant, { article_type: type, keywords: ["grind size", "burr"] }), idempotency_key: key }, tenant.token);
    // grpc-js leaves a false bool out of the reply object.
    expect(created.replayed ?? false).toBe(false);
    expect(created.article).toMatchObject({ title: "Choosing a coffee grinder", status: "queued", target_word_count: 150, keywords: ["grind size", "burr"], cost: "0.00" });
    expect(created.article.project).toEqual({ id: String(tenant.projectId), name: "Test project" });
    // 120% of the target is reserved, as over HTTP.
    expect(Number((await wordUsage(stack, tenant.accountId)).reservedWords)).toBe(180);
    const overHttp = (await apiClient(stack.baseUrl, tenant.token).get(`/v1/articles/${created.article.external_id}`)).body.data;
    expect(overHttp.id).toBe(Number(created.article.id));

    const again = await call("CreateArticle", { article: article(tenant, { article_type: type, keywords: ["grind size", "burr"] }), idempotency_key: key }, tenant.token);
    expect(again.replayed).toBe(true);
    expect(again.article.id).toBe(created.article.id);
    expect(Number((await wordUsage(stack, tenant.accountId)).reservedWords)).toBe(180);

    const other = await refusal("CreateArticle", { article: article(tenant, { article_type: type, title: "Another title" }), idempotency_key: key }, tenant.token);
    expect(other.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(detailsOf(other).badRequest!.fieldViolations.map((v) => v.field)).toEqual(["idempotency_key"]);

    const read = await call("GetArticle", { id: created.article.external_id }, tenant.token);
    expect(read.article.id).toBe(created.article.id);
    const listed = await call("ListArticles", { project_id: String(tenant.projectId), per_page: 5 }, tenant.token);
    expect(listed.articles.map((a: any) => a.id)).toEqual([created.article.id]);
    expect(listed.meta).toMatchObject({ current_page: 1, last_page: 1, per_page: 5, total: "1" });
  });

  test("every field failure comes back at once as INVALID_ARGUMENT with a google.rpc.BadRequest", async () => {
    const tenant = await createTenant(stack);
    const error = await refusal("CreateArticle", { article: article(tenant, { title: "", tone: "grumpy", target_word_count: 0 }) }, tenant.token);
    expect(error.code).toBe(grpc.status.INVALID_ARGUMENT);
    const fields = detailsOf(error).badRequest!.fieldViolations.map((v) => v.field).sort();
    expect(fields).toEqual(["target_word_count", "title", "tone"]);
    // Nothing was reserved.
    expect(Number((await wordUsage(stack, tenant.accountId)).reservedWords)).toBe(0);
  });

  test("the gates: UNAUTHENTICATED without a key, FAILED_PRECONDITION without a subscription, PERMISSION_DENIED and NOT_FOUND where /v1 answers 403 and 404", async () => {
    const tenant = await createTenant(stack);
    expect((await refusal("GetArticle", { id: "1" }, "not-a-key")).code).toBe(grpc.status.UNAUTHENTICATED);

    const unsubscribed = await createTenant(stack, { subscribed: false });
    const payment = await refusal("CreateArticle", { article: article(unsubscribed) }, unsubscribed.token);
    expect(payment.code).toBe(grpc.status.FAILED_PRECONDITION);
    expect(detailsOf(payment).errorInfo!.reason).toBe("NO_ACTIVE_SUBSCRIPTION");

    const created = await call("CreateArticle", { article: article(tenant) }, tenant.token);
    const stranger = await createTenant(stack);
    expect((await refusal("GetArticle", { id: created.article.external_id }, stranger.token)).code).toBe(grpc.status.NOT_FOUND);

    // A member limited to another project reaches the account but not this project.
    const elsewhere = await createProject(stack, tenant.accountId);
    const member = await addMemberWithKey(stack, tenant, "editor", [elsewhere]);
    expect((await refusal("GetArticle", { id: created.article.external_id }, member.token)).code).toBe(grpc.status.PERMISSION_DENIED);
    expect((await refusal("CreateArticle", { article: article(tenant) }, member.token)).code).toBe(grpc.status.PERMISSION_DENIED);
  });

  test("a word quota shortfall is RESOURCE_EXHAUSTED on target_word_count", async () => {
    const tenant = await createTenant(stack, { monthlyWords: 100 });
    const error = await refusal("CreateArticle", { article: article(tenant) }, tenant.token);
    expect(error.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    const details = detailsOf(error);
    expect(details.errorInfo!.reason).toBe("WORD_QUOTA_EXCEEDED");
    expect(details.badRequest!.fieldViolations.map((v) => v.field)).toEqual(["target_word_count"]);
  });

  test("the plan's rate limit is shared with /v1 and refused as RESOURCE_EXHAUSTED with a google.rpc.RetryInfo", async () => {
    const tenant = await createTenant(stack, { perMinute: 3 });
    const api = apiClient(stack.baseUrl, tenant.token);
    expect((await api.get("/v1/articles")).status).toBe(200);
    expect((await api.get("/v1/articles")).status).toBe(200);
    await call("ListArticles", {}, tenant.token);
    const limited = await refusal("ListArticles", {}, tenant.token);
    expect(limited.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    const details = detailsOf(limited);
    expect(details.errorInfo!.reason).toBe("RATE_LIMIT_EXCEEDED");
    expect(Number(details.retryInfo!.retryDelay!.seconds)).toBeGreaterThan(0);
    // And /v1 is refused too: one budget.
    expect((await api.get("/v1/articles")).status).toBe(429);
  });

  test("watches an article: the whole log from 0-0, its end alone once ended, and resumes after an event id", async () => {
    const tenant = await createTenant(stack);
    const type = await slowType(tenant, 800);
    const created = await call("CreateArticle", { article: article(tenant, { article_type: type }) }, tenant.token);
    const watch = (request: object) =>
      new Promise<{ id: string; event: string; data: any; data_json: string }[]>((resolve, reject) => {
        const events: { id: string; event: string; data: any; data_json: string }[] = [];
        const stream = articles.WatchArticle(request, keyed(tenant.token));
        stream.on("data", (e: any) => events.push(e));
        stream.on("error", reject);
        stream.on("end", () => resolve(events));
      });
    // From the start of its log: every event as it happens, the stream ending after the final one.
    const events = await watch({ id: created.article.external_id, last_event_id: "0-0" });
    const names = events.map((e) => e.event);
    expect(names).toContain("step_started");
    expect(names.indexOf("step_started")).toBeLessThan(names.indexOf("step_finished"));
    expect(names.at(-1)).toBe("completed");
    const finished = events.find((e) => e.event === "step_finished")!;
    expect(finished.data.fields.name.stringValue).toBe("Slow");
    expect(finished.data.fields.waited_ms.numberValue).toBeGreaterThanOrEqual(0);
    // data_json is each event's data line of /v1's stream, text for text: whole numbers stay whole
    // where Struct made them doubles (Python reads `'step': 5.0` from data, 5 from data_json).
    const overHttp = await openEvents(stack.baseUrl, tenant.token, created.article.external_id, { lastEventId: "0-0" });
    await overHttp.done;
    expect(events.map((e) => [e.id, e.data_json])).toEqual(overHttp.events.map((e) => [e.id, JSON.stringify(e.data)]));
    expect(JSON.parse(events.find((e) => e.event === "step_started")!.data_json)).toMatchObject({ step: 1, name: "Slow" });

    // Without an event id, an ended article's watch is its final event alone.
    expect((await watch({ id: created.article.external_id })).map((e) => e.event)).toEqual(["completed"]);
    // Resumed after an event, only what came after it.
    const from = events.find((e) => e.event === "step_started")!.id;
    expect((await watch({ id: created.article.external_id, last_event_id: from })).map((e) => e.event)).toEqual(names.slice(names.indexOf("step_started") + 1));
    // An id that is not one of the log's is a field error.
    const bad = await new Promise<grpc.ServiceError>((resolve) => articles.WatchArticle({ id: created.article.external_id, last_event_id: "yesterday" }, keyed(tenant.token)).on("error", resolve));
    expect(bad.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(detailsOf(bad).badRequest!.fieldViolations.map((v) => v.field)).toEqual(["last_event_id"]);
  });

  test("cancels a running article: it fails as cancelled and its words are given back", async () => {
    const tenant = await createTenant(stack);
    const type = await slowType(tenant, 20_000);
    const created = await call("CreateArticle", { article: article(tenant, { article_type: type }) }, tenant.token);
    await eventually(() => call("GetArticle", { id: created.article.id }, tenant.token), (r) => r.article.status === "writing", 15_000, "the article writing");
    const cancelled = await call("CancelArticle", { id: created.article.id }, tenant.token);
    expect(cancelled.article).toMatchObject({ status: "failed", failure_reason: "Cancelled by the client." });
    await eventually(() => wordUsage(stack, tenant.accountId), (u) => Number(u.reservedWords) === 0, 15_000, "the reservation given back");
    // Cancelling again answers the cancelled article; cancelling a completed one is refused as /v1 refuses it (422).
    expect((await call("CancelArticle", { id: created.article.id }, tenant.token)).article.status).toBe("failed");
    const quick = await call("CreateArticle", { article: article(tenant, { article_type: await slowType(tenant, 1) }) }, tenant.token);
    await eventually(() => call("GetArticle", { id: quick.article.id }, tenant.token), (r) => r.article.status === "completed", 15_000, "the quick article completed");
    expect((await refusal("CancelArticle", { id: quick.article.id }, tenant.token)).code).toBe(grpc.status.INVALID_ARGUMENT);
  });

  test("estimates and breaks down costs with the /v1 shapes", async () => {
    const tenant = await createTenant(stack);
    const estimate = await call("EstimateArticle", { article: article(tenant) }, tenant.token);
    expect(estimate.estimate.fields.words_to_reserve.numberValue).toBe(180);
    expect(Number((await wordUsage(stack, tenant.accountId)).reservedWords)).toBe(0);
    const created = await call("CreateArticle", { article: article(tenant) }, tenant.token);
    const steps = await call("GetArticleSteps", { id: created.article.external_id }, tenant.token);
    expect(steps.breakdown.fields.external_id.stringValue).toBe(created.article.external_id);
  });
});

describe("WorkflowService over a stock grpc-js client", () => {
  const step = (articleType: string, stepNumber: number, extra: object = {}) => ({
    article_type: articleType,
    step_number: stepNumber,
    step_name: `Step ${stepNumber}`,
    system: "You write articles.",
    user: `[[sim:words=20]] Write step ${stepNumber} about {title}`,
    output_format: "markdown",
    ...extra,
  });

  test("creates, reads, lists, changes, reorders, duplicates and deletes steps as /v1 does, and an article runs on the workflow", async () => {
    const tenant = await createTenant(stack);
    const project = String(tenant.projectId);
    const type = marker("flow").replace("-", "_");
    const first = await workflowCall("CreateWorkflowStep", { project_id: project, step: step(type, 1, { step_description: "The outline" }) }, tenant.token);
    expect(first.step).toMatchObject({ article_type: type, step_number: 1, step_name: "Step 1", step_description: "The outline", is_custom: true });
    const second = await workflowCall("CreateWorkflowStep", { project_id: project, step: step(type, 2, { timeout_seconds: 60 }) }, tenant.token);
    // The same step over HTTP.
    const overHttp = (await apiClient(stack.baseUrl, tenant.token).get(`/v1/projects/${project}/workflows/${second.step.id}`)).body.data;
    expect(overHttp).toMatchObject({ id: Number(second.step.id), timeout_seconds: 60 });

    const changed = await workflowCall("UpdateWorkflowStep", { project_id: project, step_id: first.step.id, changes: { step_name: "Outline" }, clear_fields: ["step_description"] }, tenant.token);
    expect(changed.step.step_name).toBe("Outline");
    expect(changed.step.step_description).toBeUndefined();
    await workflowCall("ReorderWorkflowSteps", { project_id: project, steps: [{ id: first.step.id, step_number: 3 }, { id: second.step.id, step_number: 1 }] }, tenant.token);
    const listed = await workflowCall("ListWorkflows", { project_id: project, article_type: type }, tenant.token);
    expect(listed.workflows[0].steps.map((s: any) => [s.step_name, s.step_number])).toEqual([["Step 2", 1], ["Outline", 3]]);
    expect(listed.meta).toMatchObject({ total: "1" });

    const copy = await workflowCall("DuplicateWorkflow", { project_id: project, source_article_type: type, new_article_type: `${type}_copy` }, tenant.token);
    expect(copy.workflow.steps).toHaveLength(2);

    const created = await call("CreateArticle", { article: article(tenant, { article_type: type }) }, tenant.token);
    await eventually(() => call("GetArticle", { id: created.article.id }, tenant.token), (r) => r.article.status === "completed", 20_000, "the article on the custom workflow completed");

    const removed = await workflowCall("DeleteWorkflowStep", { project_id: project, step_id: second.step.id }, tenant.token);
    expect(removed).toMatchObject({ article_type: type });
    const last = await workflowCall("DeleteWorkflowStep", { project_id: project, step_id: first.step.id }, tenant.token);
    expect(last).toMatchObject({ workflow_deleted: true, article_type: type });
  });

  test("refuses as /v1 does: every field at once in a BadRequest, a view-only member's change, another account's project", async () => {
    const tenant = await createTenant(stack);
    const project = String(tenant.projectId);
    const bad = await workflowRefusal("CreateWorkflowStep", { project_id: project, step: step("bad_type", 1, { output_format: "yaml", timeout_seconds: 5 }) }, tenant.token);
    expect(bad.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(detailsOf(bad).badRequest!.fieldViolations.map((v) => v.field).sort()).toEqual(["output_format", "timeout_seconds"]);
    const clearing = await workflowRefusal("UpdateWorkflowStep", { project_id: project, step_id: "1", clear_fields: ["system"] }, tenant.token);
    expect(detailsOf(clearing).badRequest!.fieldViolations.map((v) => v.field)).toEqual(["clear_fields"]);

    const viewer = await addMemberWithKey(stack, tenant, "viewer");
    expect((await workflowCall("ListWorkflows", { project_id: project }, viewer.token)).workflows ?? []).toEqual([]);
    expect((await workflowRefusal("CreateWorkflowStep", { project_id: project, step: step("viewer_type", 1) }, viewer.token)).code).toBe(grpc.status.PERMISSION_DENIED);
    const stranger = await createTenant(stack);
    expect((await workflowRefusal("ListWorkflows", { project_id: project }, stranger.token)).code).toBe(grpc.status.NOT_FOUND);
  });
});
