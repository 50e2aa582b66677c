// An internal team's workload calling the public gRPC API for an account without an API key: its
// ServiceAccount token in `authorization`, the account and user in `x-account-id` / `x-user-id`.
// A gateway of its own is started beside the test stack with PUBLIC_GRPC_WORKLOADS granting one
// workload a single account as a writer and another every account as a reader (each role against
// each method: public-grpc-roles.test.ts). The grant, the acting user's membership
// and project access, the subscription and the word reservation are checked as for a key.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { useStack, type TestStack } from "../harness/stack.ts";
import { addMemberWithKey, createProject, createTenant, type Tenant } from "../harness/tenants.ts";
import { startOwnGateway, type OwnGateway } from "../harness/own-gateway.ts";
import { eventually } from "../harness/eventually.ts";
import { apiClient } from "../harness/http.ts";
import { createWorkflow, marker, wordUsage } from "./generation-support.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));
const protoRoot = `${root}proto`;

let stack: TestStack;
let granted: Tenant;
let other: Tenant;
let gateway: OwnGateway;
let articles: any;

beforeAll(async () => {
  stack = await useStack();
  granted = await createTenant(stack);
  other = await createTenant(stack);
  gateway = await startOwnGateway(stack, { PUBLIC_GRPC_WORKLOADS: `reporting/exporter=${granted.accountId}:writer; cms/sync=*:reader` });
  const definition = protoLoader.loadSync("articles/api/v1/articles.proto", { includeDirs: [protoRoot], keepCase: true, longs: String, enums: String, defaults: false, oneofs: true });
  articles = new (grpc.loadPackageDefinition(definition) as any).articles.api.v1.ArticleService(`127.0.0.1:${gateway.grpcPort}`, grpc.credentials.createInsecure());
}, 60_000);

afterAll(async () => {
  articles?.close();
  await gateway?.stop();
});

/** Metadata of a workload acting for a user of an account. */
function acting(token: string, accountId: number, userId: number) {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${token}`);
  metadata.set("x-account-id", String(accountId));
  metadata.set("x-user-id", String(userId));
  return metadata;
}

const call = (method: string, request: object, metadata: grpc.Metadata) =>
  new Promise<any>((resolve, reject) => articles[method](request, metadata, { deadline: Date.now() + 10_000 }, (error: grpc.ServiceError | null, reply: any) => (error ? reject(error) : resolve(reply))));
const refusal = (method: string, request: object, metadata: grpc.Metadata) =>
  call(method, request, metadata).then(() => { throw new Error(`${method} was not refused`); }, (error: grpc.ServiceError) => error);

const article = (tenant: Tenant, projectId = tenant.projectId) => ({
  project_id: String(projectId),
  title: "Dialing in espresso",
  article_type: "blog_post",
  target_word_count: 100,
  tone: "friendly",
  point_of_view: "second_person",
  language: "en",
});

describe("a granted workload acting for an account", () => {
  test("creates an article for the acting user: words reserved, the article theirs over HTTP too", async () => {
    // A workflow whose step waits far longer than the test, so the reservation is still held when read.
    const type = marker("held");
    await createWorkflow(apiClient(stack.baseUrl, granted.token), granted.projectId, type, [{ user: "[[sim:sleep=600000]]hold" }]);
    const exporter = await stack.identity.mint("reporting/exporter");
    const asGranted = acting(exporter, granted.accountId, granted.userId);
    const created = await call("CreateArticle", { article: { ...article(granted), article_type: type }, idempotency_key: crypto.randomUUID() }, asGranted);
    expect(created.article.status).toBe("queued");
    // 120% of the target is held for it, as for a key's creation.
    expect(await wordUsage(stack, granted.accountId)).toMatchObject({ reservedWords: 120n, usedWords: 0n });
    const overHttp = await apiClient(stack.baseUrl, granted.token).get(`/v1/articles/${created.article.external_id}`);
    expect(overHttp.status).toBe(200);
    const listed = await call("ListArticles", { project_id: String(granted.projectId) }, asGranted);
    expect(listed.articles.map((a: any) => a.external_id)).toContain(created.article.external_id);
    // Cancelled before any word was written: the reservation is released, nothing used.
    const cancelled = (await call("CancelArticle", { id: created.article.external_id }, asGranted)).article;
    expect([cancelled.status, cancelled.failure_reason]).toEqual(["failed", "Cancelled by the client."]);
    await eventually(() => wordUsage(stack, granted.accountId), (u) => u.reservedWords === 0n && u.usedWords === 0n, 10_000, "the reservation to be released");
  });

  test("is refused for an account outside its grant, naming the workload, the method and the account", async () => {
    const exporter = await stack.identity.mint("reporting/exporter");
    const error = await refusal("ListArticles", {}, acting(exporter, other.accountId, other.userId));
    expect(error.code).toBe(grpc.status.PERMISSION_DENIED);
    // grpc-js reads grpc-message with decodeURI, which leaves the "/" escaped (%2F).
    expect(error.details).toBe(`Workload "reporting/exporter" may not call articles.api.v1.ArticleService/ListArticles for account ${other.accountId}.`);
    // A workload granted every account is let through for the same one.
    const sync = await stack.identity.mint("cms/sync");
    // grpc-js leaves an empty list out of the reply object.
    expect((await call("ListArticles", {}, acting(sync, other.accountId, other.userId))).articles ?? []).toEqual([]);
  });

  test("a workload granted nothing, a token that does not verify, and a user outside the account are refused", async () => {
    const stranger = await stack.identity.mint("marketing/crawler");
    expect((await refusal("ListArticles", {}, acting(stranger, granted.accountId, granted.userId))).code).toBe(grpc.status.PERMISSION_DENIED);
    expect((await refusal("ListArticles", {}, acting("not-a-token", granted.accountId, granted.userId))).code).toBe(grpc.status.UNAUTHENTICATED);
    const exporter = await stack.identity.mint("reporting/exporter");
    expect((await refusal("ListArticles", {}, acting(exporter, granted.accountId, other.userId))).code).toBe(grpc.status.PERMISSION_DENIED);
    const badId = acting(exporter, granted.accountId, granted.userId);
    badId.set("x-user-id", "me");
    expect((await refusal("ListArticles", {}, badId)).code).toBe(grpc.status.INVALID_ARGUMENT);
  });

  test("the acting user's project access is checked as /v1 checks it", async () => {
    const elsewhere = await createProject(stack, granted.accountId, "Restricted elsewhere");
    // A viewer limited to the tenant's first project: cannot create there, cannot see the other project.
    const viewer = await addMemberWithKey(stack, granted, "viewer", [granted.projectId]);
    const exporter = await stack.identity.mint("reporting/exporter");
    const asViewer = acting(exporter, granted.accountId, viewer.userId);
    expect((await refusal("CreateArticle", { article: article(granted) }, asViewer)).code).toBe(grpc.status.PERMISSION_DENIED);
    expect((await refusal("CreateArticle", { article: article(granted, elsewhere) }, asViewer)).code).toBe(grpc.status.PERMISSION_DENIED);
    // Reading the project the viewer may see is allowed, and shows the articles created there.
    expect(Number((await call("ListArticles", { project_id: String(granted.projectId) }, asViewer)).meta.total)).toBeGreaterThanOrEqual(1);
    // A project the viewer cannot see restricts the list to nothing (spec 4.2: the list refuses no query).
    const hidden = await call("ListArticles", { project_id: String(elsewhere) }, asViewer);
    // (The client loads the protos without defaults: an empty list and a zero total are absent.)
    expect({ articles: hidden.articles ?? [], total: Number(hidden.meta.total ?? 0) }).toEqual({ articles: [], total: 0 });
  });

  test("an account without a subscription is FAILED_PRECONDITION, as /v1 answers 402", async () => {
    const unsubscribed = await createTenant(stack, { subscribed: false });
    const sync = await stack.identity.mint("cms/sync");
    expect((await refusal("ListArticles", {}, acting(sync, unsubscribed.accountId, unsubscribed.userId))).code).toBe(grpc.status.FAILED_PRECONDITION);
  });
});
