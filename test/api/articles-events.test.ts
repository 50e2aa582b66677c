// GET /v1/articles/{id}/events: the live stream of a multi-step article (its current state
// first, then each state change and step, the images, and a final event after which the stream
// ends), reconnecting with Last-Event-ID, and the article read's access answers.
import { beforeAll, describe, expect, test } from "bun:test";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { addMemberWithKey, createProject, createTenant, type Tenant } from "../harness/tenants.ts";
import { createArticle } from "../harness/articles.ts";
import { articleBody, createWorkflow, finished, marker, waitForArticle } from "./generation-support.ts";
import { openEvents, steppedArticle, type SseEvent } from "./article-events-support.ts";

let stack: TestStack;
let api: ApiClient;
let tenant: Tenant;

beforeAll(async () => {
  stack = await useStack();
  tenant = await createTenant(stack);
  api = apiClient(stack.baseUrl, tenant.token);
});

const byId = (a: string, b: string) => {
  const [am, as] = a.split("-").map(BigInt);
  const [bm, bs] = b.split("-").map(BigInt);
  return am! === bm! ? Number(as! - bs!) : Number(am! - bm!);
};

/** A three-step article whose steps take a moment each, with one image. */
const slowArticle = () => steppedArticle(api, tenant.projectId, { image_count: 1 });

/** Every event the article's log holds, read back from its start. */
async function wholeLog(id: string): Promise<SseEvent[]> {
  const replay = await openEvents(stack.baseUrl, tenant.token, id, { lastEventId: "0-0" });
  await replay.done;
  expect(replay.ended).toBe(true);
  return replay.events;
}

describe("the live stream", () => {
  test("a multi-step article streams its state, every step in order, its image and a final completed event; then the stream ends", async () => {
    const created = await slowArticle();
    const live = await openEvents(stack.baseUrl, tenant.token, created.external_id);
    expect(live.status).toBe(200);
    expect(live.headers.get("content-type")).toStartWith("text/event-stream");
    await live.done;
    expect(live.ended).toBe(true);

    // It starts with the article's current state and ends with the final event.
    expect(live.events[0]!.event).toBe("state");
    expect(["queued", "writing"]).toContain(live.events[0]!.data.status);
    const last = live.events[live.events.length - 1]!;
    expect(last.event).toBe("completed");
    expect(last.data.status).toBe("completed");

    const done = await waitForArticle(api, created.external_id, finished);
    expect(last.data.cost).toBe(done.cost);

    // The whole log, from its start: each step started and finished in order, then the image.
    const log = await wholeLog(created.external_id);
    const steps = log.filter((e) => e.event.startsWith("step_")).map((e) => `${e.event} ${e.data.step} ${e.data.name}`);
    expect(steps).toEqual(["step_started 1 Outline", "step_finished 1 Outline", "step_started 2 Draft", "step_finished 2 Draft", "step_started 3 Edit", "step_finished 3 Edit"]);
    const finishedSteps = log.filter((e) => e.event === "step_finished").map((e) => e.data);
    for (const s of finishedSteps) {
      expect(s.model).toBe("simulator:sim-fast");
      expect(s.prompt_tokens).toBeGreaterThan(0);
      expect(s.completion_tokens).toBeGreaterThan(0);
      expect(s.duration_ms).toBeGreaterThanOrEqual(400);
    }
    // cost_so_far accumulates the steps' costs.
    expect(finishedSteps.map((s) => Number(s.cost_so_far))).toEqual(finishedSteps.map((_, i) => finishedSteps.slice(0, i + 1).reduce((n, s) => n + Number(s.cost), 0)).map((n) => expect.closeTo(n, 12)) as any);
    expect(log.filter((e) => e.event === "state").map((e) => `${e.data.status} ${e.data.current_step}`)).toEqual(
      expect.arrayContaining(["writing Outline", "writing Draft", "writing Edit", "polishing Generating images"]),
    );
    const images = log.filter((e) => e.event === "image");
    expect(images.map((e) => e.data.position)).toEqual([1]);
    expect(images[0]!.data.url).toBe(done.images[0].url);
    expect(log[log.length - 1]!.event).toBe("completed");
    expect(log.filter((e) => e.event === "completed")).toHaveLength(1);
    // Ids only grow, so Last-Event-ID can name any of them.
    expect([...log.map((e) => e.id)].sort(byId)).toEqual(log.map((e) => e.id));

    // After its first event the live stream carried exactly the log's events after that event's id.
    expect(live.events.slice(1)).toEqual(log.filter((e) => byId(e.id, live.events[0]!.id) > 0));
  });

  test("a client reconnecting with Last-Event-ID gets exactly the events it missed, then the end", async () => {
    const created = await slowArticle();
    const first = await openEvents(stack.baseUrl, tenant.token, created.external_id);
    const seen = await first.until((e) => e.event === "step_finished" && e.data.step === 1);
    first.close();
    await first.done;
    expect(first.ended).toBe(false);

    await waitForArticle(api, created.external_id, finished);
    const again = await openEvents(stack.baseUrl, tenant.token, created.external_id, { lastEventId: seen.id });
    await again.done;
    expect(again.ended).toBe(true);
    const log = await wholeLog(created.external_id);
    expect(again.events).toEqual(log.filter((e) => byId(e.id, seen.id) > 0));
    expect(again.events.map((e) => e.event)).toContain("step_started");
    expect(again.events[0]!.data.step ?? 2).toBe(2);
    expect(again.events[again.events.length - 1]!.event).toBe("completed");
  });

  test("an ended article's stream is its final event alone", async () => {
    const created = await slowArticle();
    const done = await waitForArticle(api, created.external_id, finished);
    const stream = await openEvents(stack.baseUrl, tenant.token, created.id);
    await stream.done;
    expect(stream.ended).toBe(true);
    expect(stream.events.map((e) => e.event)).toEqual(["completed"]);
    expect(stream.events[0]!.data).toMatchObject({ status: "completed", cost: done.cost, actual_word_count: done.actual_word_count });
  });

  test("once the stream has sent the final event, a read of the article answers it ended, though the gateway had it in memory running", async () => {
    // Quick articles, each read into the gateway's memory (a second at most) by its stream's opening.
    const type = marker("quick");
    await createWorkflow(api, tenant.projectId, type, [{ step_name: "Write", user: `[[sim:words=20]] write ${type}` }]);
    const ids = await Promise.all(Array.from({ length: 8 }, async () => (await createArticle(api, articleBody(tenant.projectId, { article_type: type }))).external_id as string));
    const statuses = await Promise.all(
      ids.map(async (id) => {
        const stream = await openEvents(stack.baseUrl, tenant.token, id);
        await stream.until((e) => e.event === "completed");
        const read = await api.get(`/v1/articles/${id}`);
        expect(read.status).toBe(200);
        return read.body.data.status;
      }),
    );
    expect(statuses).toEqual(ids.map(() => "completed"));
  });

  test("a quiet stream gets heartbeat comments (every EVENTS_HEARTBEAT_MS, 1 s in the test stack)", async () => {
    const m = marker("quiet");
    const type = marker("quiet-type");
    await createWorkflow(api, tenant.projectId, type, [{ step_name: "Slow", user: `[[sim:sleep=3500]][[sim:echo]]slow ${m}` }]);
    const created = await createArticle(api, articleBody(tenant.projectId, { article_type: type }));
    const stream = await openEvents(stack.baseUrl, tenant.token, created.external_id);
    await stream.done;
    expect(stream.ended).toBe(true);
    expect(stream.comments.filter((c) => c === "heartbeat").length).toBeGreaterThanOrEqual(2);
    expect(stream.events[stream.events.length - 1]!.event).toBe("completed");
  });
});

describe("access", () => {
  test("another account's article is 404, a project out of reach 403, no key 401: as the article read answers", async () => {
    const created = await createArticle(api, articleBody(tenant.projectId));
    const stranger = await createTenant(stack);
    const theirs = await openEvents(stack.baseUrl, stranger.token, created.external_id);
    expect(theirs.status).toBe(404);
    expect(theirs.error).toEqual({ message: "Article not found." });

    const elsewhere = await createProject(stack, tenant.accountId, "Elsewhere");
    const limited = await addMemberWithKey(stack, tenant, "viewer", [elsewhere]);
    const refused = await openEvents(stack.baseUrl, limited.token, created.id);
    expect(refused.status).toBe(403);
    expect(refused.status).toBe((await apiClient(stack.baseUrl, limited.token).get(`/v1/articles/${created.id}`)).status);

    expect((await openEvents(stack.baseUrl, "not-a-key", created.id)).status).toBe(401);
    expect((await openEvents(stack.baseUrl, tenant.token, "nope")).status).toBe(404);
  });

  test("a Last-Event-ID that is not an event id is 422 in the validation shape", async () => {
    const created = await createArticle(api, articleBody(tenant.projectId));
    const res = await openEvents(stack.baseUrl, tenant.token, created.id, { lastEventId: "yesterday" });
    expect(res.status).toBe(422);
    expect(Object.keys(res.error.errors)).toEqual(["Last-Event-ID"]);
  });
});
