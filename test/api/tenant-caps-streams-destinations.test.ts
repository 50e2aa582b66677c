// The per-plan caps on an account's open event streams (SSE and gRPC WatchArticle together, 429 in
// the gate shape past the cap) and on a project's publishing destinations (422 naming the cap, by
// the API and the operator CLI, before the site is contacted). The stream at the cap opens, the
// next is refused; a stream that ends gives its place back; raising the plan's cap lets more in.
import { beforeAll, describe, expect, test } from "bun:test";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { createArticle } from "../harness/articles.ts";
import { runAdmin } from "../harness/admin-cli.ts";
import { eventually } from "../harness/eventually.ts";
import { apiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, operatorClient, type Tenant } from "../harness/tenants.ts";
import { openEvents, type SseStream } from "./article-events-support.ts";
import { articleBody, createWorkflow, marker } from "./generation-support.ts";

let stack: TestStack;
beforeAll(async () => {
  stack = await useStack();
});

/** An article that keeps running (its one step sleeps a minute) until cancelled. */
async function longArticle(t: Tenant): Promise<any> {
  const api = apiClient(stack.baseUrl, t.token);
  const type = marker("slow");
  await createWorkflow(api, t.projectId, type, [{ user: `[[sim:sleep=60000]]Write about {title}.` }]);
  return createArticle(api, articleBody(t.projectId, { article_type: type }));
}

/** A stream that has sent its first event (it holds its place from then on). */
async function opened(t: Tenant, id: number): Promise<SseStream> {
  const stream = await openEvents(stack.baseUrl, t.token, id);
  expect(stream.status).toBe(200);
  await stream.until(() => true);
  return stream;
}

describe("open event streams per account", () => {
  test("SSE and WatchArticle count together: the stream at the cap opens, the next is 429 naming the cap with retry_after; a closed one frees its place; raising the cap lets more in", async () => {
    const t = await createTenant(stack, { caps: { openEventStreams: 2 } });
    const api = apiClient(stack.baseUrl, t.token);
    const article = await longArticle(t);

    const protoRoot = fileURLToPath(new URL("../../proto", import.meta.url));
    const definition = protoLoader.loadSync("articles/api/v1/articles.proto", { includeDirs: [protoRoot], keepCase: true, longs: String, enums: String, defaults: false, oneofs: true });
    const client = new (grpc.loadPackageDefinition(definition) as any).articles.api.v1.ArticleService(new URL(stack.publicGrpcUrl).host, grpc.credentials.createInsecure());
    const metadata = new grpc.Metadata();
    metadata.set("authorization", `Bearer ${t.token}`);
    const watch = client.WatchArticle({ id: String(article.id) }, metadata);
    await new Promise<void>((resolve, reject) => {
      watch.once("data", () => resolve());
      watch.once("error", reject);
    });

    const sse = await opened(t, article.id);
    const refused = await openEvents(stack.baseUrl, t.token, article.id);
    expect(refused.status).toBe(429);
    expect(Object.keys(refused.error).sort()).toEqual(["code", "error", "message", "retry_after"]);
    expect(refused.error.code).toBe("RATE_LIMIT_EXCEEDED");
    expect(refused.error.message).toContain("open_event_streams");
    expect(refused.error.retry_after).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get("retry-after")).toBe(String(refused.error.retry_after));

    // A gRPC watch past the cap is RESOURCE_EXHAUSTED.
    const refusedWatch = client.WatchArticle({ id: String(article.id) }, metadata);
    const error = await new Promise<grpc.ServiceError>((resolve) => refusedWatch.once("error", resolve));
    expect(error.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(error.details).toContain("open_event_streams");

    // The gRPC watch ends: its place is free again.
    watch.cancel();
    const freed = await eventually(() => openEvents(stack.baseUrl, t.token, article.id), (s) => s.status === 200, 10_000, "the place the watch gave back");
    freed.close();

    await operatorClient(stack).updatePlan({ planId: BigInt(t.planId), caps: { openEventStreams: 3 } });
    const more: SseStream[] = [];
    for (let i = 0; i < 2; i++) more.push(await eventually(() => openEvents(stack.baseUrl, t.token, article.id), (s) => s.status === 200, 10_000, "a stream within the raised cap"));
    expect((await openEvents(stack.baseUrl, t.token, article.id)).status).toBe(429);

    for (const s of [sse, ...more]) s.close();
    client.close();
    expect((await api.post(`/v1/articles/${article.id}/cancel`, {})).status).toBe(200);
  }, 60_000);

  test("the streams of an article that has ended take no place for longer than their one answer", async () => {
    const t = await createTenant(stack, { caps: { openEventStreams: 1 } });
    const api = apiClient(stack.baseUrl, t.token);
    const article = await longArticle(t);
    expect((await api.post(`/v1/articles/${article.id}/cancel`, {})).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      const stream = await eventually(() => openEvents(stack.baseUrl, t.token, article.id), (s) => s.status === 200, 10_000, "an ended article's stream");
      await stream.done;
      expect(stream.events.at(-1)!.event).toBe("failed");
    }
  }, 60_000);
});

describe("destinations per project", () => {
  const body = (name: string) => ({ kind: "wordpress", name, site_url: "http://127.0.0.1:9/", username: "editor", application_password: "abcd efgh ijkl mnop qrst uvwx" });

  test("the destination at the cap is added, the next is 422 naming destinations_per_project, by the API and the operator CLI; raising the cap lets it in", async () => {
    const t = await createTenant(stack, { caps: { destinationsPerProject: 2 } });
    const api = apiClient(stack.baseUrl, t.token);
    const base = `/v1/projects/${t.projectId}/destinations`;
    expect((await api.post(base, body("First"))).status).toBe(201);
    expect((await api.post(base, body("Second"))).status).toBe(201);
    const past = await api.post(base, body("Third"));
    expect(past.status).toBe(422);
    expect(Object.keys(past.body)).toEqual(["message", "errors"]);
    expect(past.body.errors.destinations_per_project[0]).toContain("at most 2");

    const cli = await runAdmin(
      { ...stack, env: { ...stack.env, DESTINATION_CREDENTIAL: "abcd efgh ijkl mnop qrst uvwx" } },
      "destination", "add", "--project", String(t.projectId), "--kind", "wordpress", "--name", "By the operator", "--site-url", "http://127.0.0.1:9/", "--username", "editor",
    );
    expect(cli.code).not.toBe(0);
    expect(cli.stderr).toContain("destinations_per_project");

    const raised = await runAdmin(stack, "plan", "update", "--plan", String(t.planId), "--destinations-per-project", "3");
    expect(raised.code).toBe(0);
    expect(raised.json.own_caps).toEqual({ destinations_per_project: 3 });
    const third = await eventually(() => api.post(base, body("Third")), (res) => res.status === 201, 10_000, "a destination once the cap is raised");
    expect(third.body.data.name).toBe("Third");
    expect((await api.get(base)).body.data).toHaveLength(3);

    const back = await runAdmin(stack, "plan", "update", "--plan", String(t.planId), "--destinations-per-project", "default");
    expect(back.json.caps.destinations_per_project).toBe(10);
    expect(back.json.own_caps).toEqual({});
  }, 60_000);
});
