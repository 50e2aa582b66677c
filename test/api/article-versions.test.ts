// An article after generation, over HTTP and the public gRPC API: its version history (generation
// is version 1), edits with PATCH on the version they were made on (If-Match or base_version_id;
// of two edits on one base exactly one wins, the other is 409 and changes nothing), restoring an
// earlier version as a new one, a version_created event on the article's log for each, and project
// access: a read-only key reads the history but cannot edit or restore.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as grpc from "@grpc/grpc-js";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, operatorClient, type Tenant } from "../harness/tenants.ts";
import { createArticle } from "../harness/articles.ts";
import { closeClients, publicClients, type PublicClients } from "../harness/public-grpc.ts";
import { grpcOutcome } from "./reach-support.ts";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { articleBody, finished, waitForArticle, webhookReceiver } from "./generation-support.ts";
import { openEvents } from "./article-events-support.ts";
import { eventually } from "../harness/eventually.ts";

let stack: TestStack;
let tenant: Tenant;
let api: ApiClient;
let clients: PublicClients;
let readOnlyToken: string;
/** A finished article of the tenant, shared by the tests in order. */
let article: any;

const EDITED = "# A better grinder guide\n\nBurr grinders crush beans evenly, so every cup tastes the same.\n\nBlade grinders chop unevenly.";

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
  clients = publicClients(Number(new URL(stack.publicGrpcUrl).port));
  const { token } = await operatorClient(stack).createApiKey({ accountId: BigInt(tenant.accountId), userId: BigInt(tenant.userId), scope: { accountOnly: false, projectIds: [], readOnly: true } });
  readOnlyToken = token;
  const created = await createArticle(api, articleBody(tenant.projectId));
  article = await waitForArticle(api, created.external_id, finished);
  expect(article.status).toBe("completed");
}, 90_000);

afterAll(() => closeClients(clients));

const keyed = (token: string) => {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${token}`);
  return metadata;
};
const grpcCall = (method: string, request: object, token = tenant.token) => grpcOutcome(clients, "ArticleService", method, request, keyed(token));

describe("versions of a generated article", () => {
  test("generation is version 1, current, made by the run; GET carries its ETag", async () => {
    const read = await api.get(`/v1/articles/${article.external_id}`);
    expect(read.headers.get("etag")).toBe(`"${article.current_version_id}"`);
    const listed = await api.get(`/v1/articles/${article.external_id}/versions`);
    expect(listed.status).toBe(200);
    expect(listed.body.data).toHaveLength(1);
    const [first] = listed.body.data;
    expect(first).toMatchObject({ id: article.current_version_id, number: 1, kind: "generated", current: true, made_by: { workload: "generation-runner" }, word_count: article.actual_word_count, description: article.description });
    expect(first.content).toBeUndefined();
    const one = await api.get(`/v1/articles/${article.id}/versions/1`);
    expect(one.status).toBe(200);
    expect(one.body.data.content).toBe(article.content);
    expect(one.body.data.ai_detection_score).toBe(article.ai_detection_score);
    expect((await api.get(`/v1/articles/${article.id}/versions/9`)).status).toBe(404);
    expect((await api.get(`/v1/articles/${article.id}/versions/abc`)).status).toBe(404);
  });

  test("an edit needs its base, keeps the title, and takes markdown only", async () => {
    const path = `/v1/articles/${article.external_id}`;
    const noBase = await api.patch(path, { content: EDITED });
    expect(noBase.status).toBe(422);
    expect(noBase.body.errors.base_version_id).toBeDefined();
    const title = await api.patch(path, { title: "Another title", base_version_id: article.current_version_id });
    expect(title.status).toBe(422);
    expect(title.body.errors.title).toBeDefined();
    const json = await api.patch(path, { content: '{"article":{"content":"x"}}' }, { headers: { "if-match": `"${article.current_version_id}"` } });
    expect(json.status).toBe(422);
    expect(json.body.errors.content).toBeDefined();
    const badMatch = await api.patch(path, { content: EDITED }, { headers: { "if-match": "nonsense" } });
    expect(badMatch.status).toBe(422);
    // Nothing of these changed the article.
    expect((await api.get(`/v1/articles/${article.external_id}/versions`)).body.data).toHaveLength(1);
  });

  test("a read-only key reads the history but cannot edit or restore, over HTTP or gRPC", async () => {
    const reader = api.withToken(readOnlyToken);
    expect((await reader.get(`/v1/articles/${article.external_id}/versions`)).status).toBe(200);
    const edit = await reader.patch(`/v1/articles/${article.external_id}`, { content: EDITED, base_version_id: article.current_version_id });
    expect(edit.status).toBe(403);
    expect((await reader.post(`/v1/articles/${article.external_id}/versions/1/restore`)).status).toBe(403);
    expect((await grpcCall("UpdateArticle", { id: article.external_id, base_version_id: String(article.current_version_id), content: EDITED }, readOnlyToken)).code).toBe("PERMISSION_DENIED");
    expect((await grpcCall("ListArticleVersions", { id: article.external_id }, readOnlyToken)).code).toBe("OK");
    expect((await api.get(`/v1/articles/${article.external_id}/versions`)).body.data).toHaveLength(1);
  });

  test("two edits on the same base: exactly one wins, the other is 409 naming the current version and changes nothing", async () => {
    const base = article.current_version_id;
    const path = `/v1/articles/${article.external_id}`;
    const [a, b] = await Promise.all([
      api.patch(path, { content: EDITED, description: "Edit A" }, { headers: { "if-match": `"${base}"` } }),
      api.patch(path, { content: `${EDITED}\n\nA second edit.`, description: "Edit B", base_version_id: base }),
    ]);
    expect([a.status, b.status].sort()).toEqual([200, 409]);
    const [won, lost] = a.status === 200 ? [a, b] : [b, a];
    const edited = won.body.data;
    expect(won.headers.get("etag")).toBe(`"${edited.current_version_id}"`);
    expect(lost.body.current_version_id).toBe(edited.current_version_id);
    expect(lost.body.message).toContain("no longer current");

    expect(edited.current_version_id).not.toBe(base);
    expect(edited.status).toBe("completed");
    expect(edited.current_step).toBeNull();
    expect(edited.title).toBe(article.title);
    expect(edited.original_content).toBe(article.original_content);
    expect(edited.content.startsWith(EDITED)).toBe(true);
    expect(edited.ai_detection_score).toBeNull();
    expect(edited.actual_word_count).toBe(edited.content.trim().split(/\s+/).filter((w: string) => /[\p{L}\p{N}]/u.test(w)).length);

    const history = (await api.get(`/v1/articles/${article.external_id}/versions`)).body.data;
    expect(history.map((v: any) => [v.number, v.kind, v.current])).toEqual([
      [1, "generated", false],
      [2, "edited", true],
    ]);
    expect(history[1].made_by).toEqual({ key_id: tenant.keyId });
    // The check runs again on the new text: the article then shows the new version's score.
    const checked = await eventually(async () => (await api.get(path)).body.data, (a) => a.ai_detection_score !== null, 10_000, "the edited version's score");
    expect(checked.current_version_id).toBe(edited.current_version_id);
    expect(typeof checked.ai_detection_score).toBe("number");
    expect((await api.get(`${path}/versions/2`)).body.data.ai_detection_score).toBe(checked.ai_detection_score);
    // So do the brief checks, measured on the edited text against the article's brief, with no repair.
    const byName = Object.fromEntries(checked.quality.checks.map((c: { name: string }) => [c.name, c]));
    expect(byName.length).toMatchObject({ status: "failed", value: checked.actual_word_count });
    expect(byName.single_h1).toMatchObject({ status: "passed" });
    expect(checked.quality.repairs).toEqual([]);
    expect((await api.get(`${path}/versions/2`)).body.data.quality).toEqual(checked.quality);
    // Version 1 is as it was.
    expect((await api.get(`/v1/articles/${article.external_id}/versions/1`)).body.data.content).toBe(article.content);
    article = checked;
  });

  test("restore makes the old content current as a new version; a stale If-Match is 409", async () => {
    const path = `/v1/articles/${article.external_id}/versions/1/restore`;
    const stale = await api.post(path, undefined, { headers: { "if-match": '"1"' } });
    expect(stale.status).toBe(409);
    const restored = await api.post(path, undefined, { headers: { "if-match": `"${article.current_version_id}"` } });
    expect(restored.status).toBe(200);
    const data = restored.body.data;
    const first = (await api.get(`/v1/articles/${article.external_id}/versions/1`)).body.data;
    expect(data.content).toBe(first.content);
    expect(data.description).toBe(first.description);
    expect(data.ai_detection_score).toBe(first.ai_detection_score);
    expect(data.actual_word_count).toBe(first.word_count);
    const third = (await api.get(`/v1/articles/${article.external_id}/versions/3`)).body.data;
    expect(third).toMatchObject({ id: data.current_version_id, kind: "restored", restored_from: 1, current: true, content: first.content });
    article = data;
  });

  test("each new version is a version_created event on the article's log, after the run's end", async () => {
    // A stream ends after the run's final event; the versions come after it, read from its id on.
    const run = await openEvents(stack.baseUrl, tenant.token, article.external_id, { lastEventId: "0-0", deadlineMs: 10_000 });
    await run.done;
    const completed = run.events.find((e) => e.event === "completed")!;
    expect(completed).toBeDefined();
    const later = await openEvents(stack.baseUrl, tenant.token, article.external_id, { lastEventId: completed.id, deadlineMs: 10_000 });
    await later.done;
    const created = later.events.filter((e) => e.event === "version_created");
    expect(created.map((e) => [e.data.number, e.data.kind])).toEqual([
      [2, "edited"],
      [3, "restored"],
    ]);
    expect(created[1]!.data).toMatchObject({ restored_from: 1, current_version_id: article.current_version_id, made_by_key_id: tenant.keyId });
    // Never a delivery: no webhook_url here, and the article's status stayed.
    expect(later.events.at(-1)!.event).toBe("completed");
  });

  test("over gRPC: the history, an edit on a stale base is ABORTED, then one on the current base, and a restore", async () => {
    const listed = await grpcCall("ListArticleVersions", { id: article.external_id });
    expect(listed.code).toBe("OK");
    expect(listed.reply.versions.map((v: any) => v.kind)).toEqual(["generated", "edited", "restored"]);
    const one = await grpcCall("GetArticleVersion", { id: article.external_id, version: 1 });
    expect(one.reply.version.content).toBe(article.content);

    const stale = await grpcCall("UpdateArticle", { id: article.external_id, base_version_id: "1", description: "Stale" });
    expect(stale.code).toBe("ABORTED");
    const edited = await grpcCall("UpdateArticle", { id: article.external_id, base_version_id: String(article.current_version_id), description: "Over gRPC" });
    expect(edited.code).toBe("OK");
    expect(edited.reply.version_number).toBe(4);
    expect(edited.reply.article.description).toBe("Over gRPC");
    // The description alone changed: the text, its words and its score stay.
    expect(edited.reply.article.content).toBe(article.content);
    expect(edited.reply.article.ai_detection_score).toBe(article.ai_detection_score);

    const restored = await grpcCall("RestoreArticleVersion", { id: article.external_id, version: 2 });
    expect(restored.code).toBe("OK");
    expect(restored.reply.version_number).toBe(5);
    expect(restored.reply.article.content.startsWith(EDITED)).toBe(true);
    const read = await api.get(`/v1/articles/${article.external_id}`);
    expect(read.body.data.current_version_id).toBe(Number(restored.reply.article.current_version_id));
  });

  test("an article that is not completed or published cannot be edited or restored: 409", async () => {
    const created = await createArticle(api, articleBody(tenant.projectId, { title: "Cancelled before writing" }));
    await api.post(`/v1/articles/${created.external_id}/cancel`);
    const edit = await api.patch(`/v1/articles/${created.external_id}`, { content: EDITED, base_version_id: 1 });
    expect(edit.status).toBe(409);
    expect(edit.body.status).toBe("failed");
    const restore = await api.post(`/v1/articles/${created.external_id}/versions/1/restore`);
    expect(restore.status).toBe(404);
  });

  test("a published article stays published: an edit makes current_version_id differ from published_version_id, and sends no webhook", async () => {
    const hook = webhookReceiver();
    try {
      const created = await createArticle(api, articleBody(tenant.projectId, { title: "Published then edited", webhook_url: hook.url }));
      const published = await waitForArticle(api, created.external_id, (a) => a.status === "published" || a.status === "failed");
      expect(published.status).toBe("published");
      const deliveries = hook.received.length;
      const edited = await api.patch(`/v1/articles/${created.external_id}`, { content: EDITED }, { headers: { "if-match": `"${published.current_version_id}"` } });
      expect(edited.status).toBe(200);
      expect(edited.body.data).toMatchObject({ status: "published", published_version_id: published.published_version_id });
      expect(edited.body.data.current_version_id).not.toBe(published.published_version_id);
      const history = (await api.get(`/v1/articles/${created.external_id}/versions`)).body.data;
      expect(history.map((v: any) => [v.kind, v.current, v.published])).toEqual([
        ["generated", false, true],
        ["edited", true, false],
      ]);
      // Still published, and nothing more was delivered.
      expect((await api.get(`/v1/articles/${created.external_id}`)).body.data.status).toBe("published");
      expect(hook.received.length).toBe(deliveries);
    } finally {
      hook.stop();
    }
  });

  test("answers validate against the OpenAPI document", async () => {
    const document = (await api.get("/docs/json")).body;
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(document, "openapi.json");
    const problems = (path: string, method: string, status: string, value: unknown) => {
      const escaped = path.replace(/~/g, "~0").replace(/\//g, "~1");
      const validate = ajv.getSchema(`openapi.json#/paths/${escaped}/${method}/responses/${status}/content/application~1json/schema`)!;
      return validate(value) ? null : validate.errors;
    };
    const id = article.external_id;
    expect(problems("/v1/articles/{id}/versions", "get", "200", (await api.get(`/v1/articles/${id}/versions`)).body)).toBeNull();
    expect(problems("/v1/articles/{id}/versions/{version}", "get", "200", (await api.get(`/v1/articles/${id}/versions/1`)).body)).toBeNull();
    const current = (await api.get(`/v1/articles/${id}`)).body.data.current_version_id;
    const edited = await api.patch(`/v1/articles/${id}`, { description: "Validated" }, { headers: { "if-match": `"${current}"` } });
    expect(problems("/v1/articles/{id}", "patch", "200", edited.body)).toBeNull();
    const stale = await api.patch(`/v1/articles/${id}`, { description: "Stale" }, { headers: { "if-match": `"${current}"` } });
    expect(stale.status).toBe(409);
    expect(problems("/v1/articles/{id}", "patch", "409", stale.body)).toBeNull();
    const restored = await api.post(`/v1/articles/${id}/versions/1/restore`);
    expect(problems("/v1/articles/{id}/versions/{version}/restore", "post", "200", restored.body)).toBeNull();
  });
});
