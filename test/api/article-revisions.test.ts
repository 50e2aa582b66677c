// POST /v1/articles/{id}/revisions and gRPC's ReviseArticleSection: a rewrite of section 2 runs on
// the generation-runner and ends in a new version where only that section changed (every byte
// before its text and from the next H2 on is identical), settles only the words it wrote, and is
// announced as a version_created event; status and current_step stay. A second operation while
// one runs is 409, as is one on an unfinished article; bad input is 422 in the spec's shape; an
// Idempotency-Key replays the first answer; a cancel stops a revision and gives its words back; a
// delete erases revisions and bills their words in the erasure record.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import * as grpc from "@grpc/grpc-js";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { createArticle } from "../harness/articles.ts";
import { closeClients, publicClients, type PublicClients } from "../harness/public-grpc.ts";
import { grpcOutcome } from "./reach-support.ts";
import { articleBody, finished, waitForArticle, wordUsage } from "./generation-support.ts";
import { openEvents } from "./article-events-support.ts";
import { eventually } from "../harness/eventually.ts";
import { articleSections } from "../../services/kit/src/rules/article-sections.ts";
import postgres from "postgres";

let stack: TestStack;
let tenant: Tenant;
let api: ApiClient;
let clients: PublicClients;
let article: any;
/** The tenant's billed words once the article was generated (its only words then). */
let generationWords: number;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
  clients = publicClients(Number(new URL(stack.publicGrpcUrl).port));
  const created = await createArticle(api, articleBody(tenant.projectId, { target_word_count: 400, include_faq: true }));
  article = await waitForArticle(api, created.external_id, finished);
  expect(article.status).toBe("completed");
  generationWords = Number((await eventually(() => wordUsage(stack, tenant.accountId), (u) => Number(u.reservedWords) === 0, 15_000, "the generation settled")).usedWords);
}, 90_000);

afterAll(() => closeClients(clients));

const metadataOf = (token: string) => {
  const metadata = new grpc.Metadata();
  metadata.set("authorization", `Bearer ${token}`);
  return metadata;
};

const revisionsOf = async (id: string) => (await api.get(`/v1/articles/${id}/revisions`)).body.data;

describe("section revisions", () => {
  test("bad input is 422 field by field", async () => {
    const path = `/v1/articles/${article.external_id}/revisions`;
    const none = await api.post(path, {});
    expect(none.status).toBe(422);
    expect(Object.keys(none.body.errors).sort()).toEqual(["action", "section"]);
    expect(typeof none.body.message).toBe("string");
    const rewrite = await api.post(path, { section: 1, action: "rewrite", target_words: 10 });
    expect(rewrite.status).toBe(422);
    expect(Object.keys(rewrite.body.errors).sort()).toEqual(["instruction", "target_words"]);
    const translate = await api.post(path, { section: "1", action: "translate" });
    expect(translate.body.errors.language).toBeDefined();
    const missing = await api.post(path, { section: "No such heading", action: "expand" });
    expect(missing.status).toBe(422);
    expect(missing.body.errors.section).toBeDefined();
  });

  test("a rewrite of section 2 changes only that section, settles only its words, and is one version", async () => {
    const listed = await revisionsOf(article.external_id);
    expect(listed.revisions).toEqual([]);
    expect(listed.sections.length).toBeGreaterThanOrEqual(3);
    expect(listed.sections[1]).toMatchObject({ index: 2 });
    const before = await wordUsage(stack, tenant.accountId);
    // It runs past the reconciler's stale age (3 s in the test stack): its hold is the revision's, never an orphan to release.
    const body = { section: 2, action: "rewrite", instruction: "[[sim:sleep=4500]] Open with a concrete example." };
    const key = `revise-${article.external_id}`;
    const queued = await api.post(`/v1/articles/${article.external_id}/revisions`, body, { headers: { "idempotency-key": key } });
    expect(queued.status).toBe(202);
    expect(queued.body.data).toMatchObject({ number: 1, action: "rewrite", section: { index: 2, heading: listed.sections[1].heading }, reserved_words: Math.ceil(listed.sections[1].word_count * 1.2) });

    // While it runs: a second operation is 409; the same key and body replay the first answer; another body with the key is 422.
    const second = await api.post(`/v1/articles/${article.external_id}/revisions`, { section: 1, action: "shorten" });
    expect(second.status).toBe(409);
    const replay = await api.post(`/v1/articles/${article.external_id}/revisions`, body, { headers: { "idempotency-key": key } });
    expect(replay.status).toBe(202);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body.data.number).toBe(1);
    const reused = await api.post(`/v1/articles/${article.external_id}/revisions`, { ...body, instruction: "Other" }, { headers: { "idempotency-key": key } });
    expect(reused.status).toBe(422);
    expect(reused.body.errors.idempotency_key).toBeDefined();

    const held: number[] = [];
    const done = await eventually(
      async () => {
        const [d, usage] = await Promise.all([revisionsOf(article.external_id), wordUsage(stack, tenant.accountId)]);
        if (!["completed", "failed"].includes(d.revisions[0]?.status)) held.push(Number(usage.reservedWords) - Number(before.reservedWords));
        return d;
      },
      (d) => ["completed", "failed"].includes(d.revisions[0]?.status),
      30_000,
      "the revision ended",
    );
    expect(held.length).toBeGreaterThan(0);
    expect(Math.min(...held)).toBe(queued.body.data.reserved_words);
    const revision = done.revisions[0];
    expect(revision).toMatchObject({ number: 1, status: "completed", failure_reason: null });
    // The new version is scored as an edit's is, moments after it is made.
    const after = await waitForArticle(api, article.external_id, (a) => a.current_version_id === revision.version_id && a.ai_detection_score !== null, 15_000);
    expect(after.status).toBe(article.status);
    expect(after.current_step).toBe(article.current_step);

    // Byte for byte: everything up to section 2's text, and from section 3's heading on.
    const old = articleSections(article.content);
    const now = articleSections(after.content);
    expect(now.map((s) => s.heading)).toEqual(old.map((s) => s.heading));
    expect(after.content.slice(0, now[1]!.bodyStart)).toBe(article.content.slice(0, old[1]!.bodyStart));
    expect(after.content.slice(now[2]!.start)).toBe(article.content.slice(old[2]!.start));
    expect(after.content.slice(now[1]!.bodyStart, now[2]!.start)).not.toBe(article.content.slice(old[1]!.bodyStart, old[2]!.start));

    // One new version, recording what was asked and by whom.
    const versions = (await api.get(`/v1/articles/${article.external_id}/versions`)).body.data;
    expect(versions.at(-1)).toMatchObject({ id: revision.version_id, kind: "section_rewrite", current: true, made_by: { key_id: tenant.keyId }, revision: { number: 1, action: "rewrite", section_index: 2, instruction: body.instruction } });

    // Only the section's words are billed: what was written, nothing left reserved.
    const usage = await eventually(() => wordUsage(stack, tenant.accountId), (u) => Number(u.reservedWords) === Number(before.reservedWords), 15_000, "the hold settled");
    expect(Number(usage.usedWords) - Number(before.usedWords)).toBe(revision.written_words);
    expect(revision.written_words).toBeGreaterThan(0);

    // Its model call is a line of the article's cost breakdown.
    const steps = (await api.get(`/v1/articles/${article.external_id}/steps`)).body.data;
    expect(steps.finishing.map((f: any) => f.task)).toContain(`revision 1: rewrite "${revision.section.heading}"`);
    // The article's cost is still the breakdown's total, the revision's call included.
    expect(steps.total_cost).toBe(after.cost);
    expect(Number(after.cost)).toBeGreaterThan(Number(article.cost));

    // The new version is an event on the article's stream, after the run's end.
    const run = await openEvents(stack.baseUrl, tenant.token, article.external_id, { lastEventId: "0-0", deadlineMs: 10_000 });
    await run.done;
    const completed = run.events.find((e) => e.event === "completed")!;
    const later = await openEvents(stack.baseUrl, tenant.token, article.external_id, { lastEventId: completed.id, deadlineMs: 10_000 });
    await later.done;
    expect(later.events.filter((e) => e.event === "version_created").map((e) => [e.data.kind, e.data.version_id])).toEqual([["section_rewrite", revision.version_id]]);
    expect(later.events.filter((e) => e.event === "revision").map((e) => [e.data.number, e.data.status])).toEqual([
      [1, "running"],
      [1, "completed"],
    ]);
    article = after;
  }, 60_000);

  test("a cancel stops the revision under way: no version, its hold given back, the article unchanged", async () => {
    const before = await wordUsage(stack, tenant.accountId);
    const queued = await api.post(`/v1/articles/${article.external_id}/revisions`, { section: "1", action: "expand", instruction: "[[sim:sleep=5000]]", target_words: 200 });
    expect(queued.status).toBe(202);
    expect(queued.body.data).toMatchObject({ number: 2, reserved_words: 240 });
    await eventually(() => revisionsOf(article.external_id), (d) => d.revisions[0]?.status === "running", 10_000, "the revision running");
    const cancelled = await api.post(`/v1/articles/${article.external_id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.message).toContain("Section revision cancelled");
    expect(cancelled.body.data).toMatchObject({ status: "completed", current_version_id: article.current_version_id });
    const [revision] = (await revisionsOf(article.external_id)).revisions;
    expect(revision).toMatchObject({ number: 2, status: "failed", failure_reason: "Cancelled by the client.", version_id: null });
    await eventually(() => wordUsage(stack, tenant.accountId), (u) => Number(u.reservedWords) === Number(before.reservedWords) && Number(u.usedWords) === Number(before.usedWords), 15_000, "the hold given back");
    const after = (await api.get(`/v1/articles/${article.external_id}`)).body.data;
    expect([after.content, after.current_version_id]).toEqual([article.content, article.current_version_id]);
    // Nothing left running: a cancel now is refused as for any finished article.
    expect((await api.post(`/v1/articles/${article.external_id}/cancel`)).status).toBe(422);
  }, 30_000);

  test("over gRPC: sections listed; an unfinished article's section is not revised (409 over HTTP)", async () => {
    const listed = await grpcOutcome(clients, "ArticleService", "ListArticleRevisions", { id: article.external_id }, metadataOf(tenant.token));
    expect(listed.code).toBe("OK");
    expect(listed.reply.revisions.map((r: any) => r.status)).toEqual(["failed", "completed"]);
    expect(listed.reply.sections.length).toBeGreaterThanOrEqual(3);

    const running = await createArticle(api, articleBody(tenant.projectId, { title: "Still being written", additional_instruction: "[[sim:sleep=3000]]" }));
    const http = await api.post(`/v1/articles/${running.external_id}/revisions`, { section: 1, action: "expand" });
    expect(http.status).toBe(409);
    const rpc = await grpcOutcome(clients, "ArticleService", "ReviseArticleSection", { id: running.external_id, section: "1", action: "expand" }, metadataOf(tenant.token));
    expect(rpc.code).toBe("ABORTED");
    await api.post(`/v1/articles/${running.external_id}/cancel`);
  }, 30_000);

  test("deleting the article erases its revisions; the erasure record bills the generation's words and the revision's", async () => {
    const [completed] = (await revisionsOf(article.external_id)).revisions.filter((r: any) => r.status === "completed");
    expect((await api.delete(`/v1/articles/${article.external_id}`)).status).toBe(200);
    const sql = postgres(stack.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      expect(await sql`select 1 from article_store.section_revisions where article_id = ${article.id}`).toHaveLength(0);
      const [erasure] = await sql`select words_billed from article_store.article_erasures where article_id = ${article.id}`;
      expect(Number(erasure!.words_billed)).toBe(generationWords + completed.written_words);
    } finally {
      await sql.end();
    }
  });
});
