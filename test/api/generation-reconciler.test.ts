// Redis comes back empty: the BullMQ jobs of the stack's queues are gone (only this stack's keys
// are deleted, as an emptied Redis would have them; the shared Redis is never flushed). The
// reconciler in article-store finds every article left without a live job and hands it back:
// each completes, its steps billed once, its words settled once, its webhook delivered once.
// A job that is merely slow, or a run still in flight whose job vanished, is left alone.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { Queue } from "bullmq";
import IORedis from "ioredis";
import postgres from "postgres";
import { queuePrefix } from "../../services/kit/src/redis.ts";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { useStack, type TestStack } from "../harness/stack.ts";
import { createTenant, type Tenant } from "../harness/tenants.ts";
import { createArticle } from "../harness/articles.ts";
import { eventually } from "../harness/eventually.ts";
import { lifecycleClient, quotaClient } from "../harness/service-clients.ts";
import { FairDispatch, type LineEntry } from "../../services/kit/src/fair-dispatch.ts";
import { createLogger } from "../../services/kit/src/logger.ts";
import { startReconciler } from "../../services/article-store/src/reconciler.ts";
import { articleStoreDatabase, storedArticle } from "./articles-fixtures.ts";
import { articleBody, callsStartingWith, createWorkflow, marker, runOf, waitForArticle, webhookReceiver, wordUsage, type WebhookReceiver } from "./generation-support.ts";

let stack: TestStack;
let redis: IORedis;

beforeAll(async () => {
  stack = await useStack();
  redis = new IORedis(stack.env.REDIS_URL ?? "redis://127.0.0.1:6379");
});

afterAll(async () => {
  for (const name of ["generationRunner", "webhookDispatcher"] as const) if (stack.processes.get(name)?.exitCode !== null) await stack.start(name);
  redis.disconnect();
});

/** Deletes every key of one of this stack's BullMQ queues (jobs, locks, lists, events). */
async function wipeQueue(queue: "generation" | "webhooks"): Promise<number> {
  let cursor = "0";
  let deleted = 0;
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${queuePrefix(stack.redisPrefix, false)}:${queue}:*`, "COUNT", 1000);
    if (keys.length) deleted += await redis.del(...keys);
    cursor = next;
  } while (cursor !== "0");
  return deleted;
}

const jobExists = async (queue: "generation" | "webhooks", externalId: string) => (await redis.exists(`${queuePrefix(stack.redisPrefix, false)}:${queue}:${externalId}`)) === 1;

async function tenantWithApi(): Promise<{ tenant: Tenant; api: ApiClient }> {
  const tenant = await createTenant(stack);
  return { tenant, api: apiClient(stack.baseUrl, tenant.token) };
}

/** Each article's deliveries at the hook. */
const deliveriesOf = (hook: WebhookReceiver, externalId: string) => hook.received.filter((r) => r.body?.data?.external_id === externalId).length;

test("articles whose generation jobs were wiped all complete, each step billed once and their words settled once", async () => {
  const { tenant, api } = await tenantWithApi();
  const hook = webhookReceiver();
  try {
    const type = marker("reconciled");
    // The title makes each article's prompts its own, so the simulator counts calls per article.
    await createWorkflow(api, tenant.projectId, type, [
      { step_name: "One", user: "[[sim:echo]]one {title}" },
      { step_name: "Slow two", user: "[[sim:sleep=2000]][[sim:echo]]two {title}" },
      { step_name: "Three", user: "[[sim:echo]]three {title} after {step_2_output}" },
    ]);
    const create = async () => {
      const title = marker("article");
      const created = await createArticle(api, articleBody(tenant.projectId, { article_type: type, title, webhook_url: hook.url }));
      return { id: created.external_id as string, title };
    };

    // Three articles mid-run, in their slow step when the runner dies with Redis.
    const writing = [await create(), await create(), await create()];
    for (const a of writing) await waitForArticle(api, a.id, (x) => x.current_step === "Slow two", 20_000);
    // Two more whose jobs wait in the queue (paused, so no worker takes them first).
    const generationQueue = new Queue("generation", { connection: redis, prefix: queuePrefix(stack.redisPrefix, false) });
    await generationQueue.pause();
    const queued = [await create(), await create()];
    for (const a of queued) await eventually(() => jobExists("generation", a.id), Boolean, 10_000, `the generation job of ${a.id}`);
    await generationQueue.close();

    await stack.kill("generationRunner");
    try {
      // The pause goes too: it is kept in the queue's own keys.
      expect(await wipeQueue("generation")).toBeGreaterThan(0);
      for (const a of [...writing, ...queued]) expect(await jobExists("generation", a.id)).toBe(false);
    } finally {
      await stack.start("generationRunner");
    }

    const all = [...writing, ...queued];
    const done = [];
    for (const a of all) done.push(await waitForArticle(api, a.id, (x) => x.status === "published", 60_000));
    for (const [i, a] of all.entries()) expect(done[i].content).toBe(`three ${a.title} after two ${a.title}`);

    for (const [i, a] of all.entries()) {
      // Finished steps never ran again; the step in flight when the runner died ran once more at most.
      expect(await callsStartingWith(stack, a.title, "one")).toBe(1);
      expect(await callsStartingWith(stack, a.title, "two")).toBe(writing.includes(a) ? 2 : 1);
      expect(await callsStartingWith(stack, a.title, "three")).toBe(1);
      const run = await runOf(stack, a.id);
      expect(run!.steps.map((s) => s.stepNumber)).toEqual([1, 2, 3]);
      expect(Number(done[i].cost)).toBeCloseTo(Number(run!.cost), 10);
      // One delivery, recorded on the article.
      expect(deliveriesOf(hook, a.id)).toBe(1);
      const { attempts } = await lifecycleClient(stack, "operator").listDeliveryAttempts({ externalId: a.id });
      expect(attempts.filter((x) => x.succeeded)).toHaveLength(1);
    }

    // Every reservation settled, once, for the words actually written.
    const usage = await wordUsage(stack, tenant.accountId);
    expect(Number(usage.reservedWords)).toBe(0);
    expect(Number(usage.usedWords)).toBe(done.reduce((n, a) => n + a.actual_word_count, 0));
  } finally {
    hook.stop();
  }
}, 120_000);

test("a completed article whose webhook job was wiped is still delivered, once", async () => {
  const { tenant, api } = await tenantWithApi();
  const hook = webhookReceiver();
  try {
    const type = marker("delivery");
    await createWorkflow(api, tenant.projectId, type, [{ step_name: "Only", user: "[[sim:echo]]only {title}" }]);
    await stack.kill("webhookDispatcher");
    const title = marker("article");
    let id: string;
    try {
      ({ external_id: id } = await createArticle(api, articleBody(tenant.projectId, { article_type: type, title, webhook_url: hook.url })));
      await waitForArticle(api, id, (x) => x.status === "completed" && x.ai_detection_score !== null, 30_000);
      await eventually(() => jobExists("webhooks", id), Boolean, 10_000, "the webhook job");
      expect(await wipeQueue("webhooks")).toBeGreaterThan(0);
    } finally {
      await stack.start("webhookDispatcher");
    }

    const published = await waitForArticle(api, id, (x) => x.status === "published", 30_000);
    expect(published.content).toBe(`only ${title}`);
    expect(deliveriesOf(hook, id)).toBe(1);
    expect(hook.received[0]!.body.data.external_id).toBe(id);
    const { attempts } = await lifecycleClient(stack, "operator").listDeliveryAttempts({ externalId: id });
    expect(attempts.map((a) => a.succeeded)).toEqual([true]);
    // Published, it is owed nothing more: a few more sweeps send nothing again.
    await Bun.sleep(4_000);
    expect(deliveriesOf(hook, id)).toBe(1);
  } finally {
    hook.stop();
  }
}, 60_000);

test("a batching article whose job was wiped polls the same batch again: no second batch is submitted", async () => {
  const { tenant, api } = await tenantWithApi();
  const created = await createArticle(
    api,
    articleBody(tenant.projectId, { article_type: "song_meaning_single_model_5", title: marker("batched"), model: "simulator:sim-batch", use_batch_api: true }),
  );
  const id: string = created.external_id;
  // Its job submits the batch, then waits on it between polls.
  await waitForArticle(api, id, (x) => x.status === "batching" && x.current_step !== null, 15_000);
  await stack.kill("generationRunner");
  try {
    await wipeQueue("generation");
  } finally {
    await stack.start("generationRunner");
  }

  const done = await waitForArticle(api, id, (x) => x.status === "completed" && x.ai_detection_score !== null, 60_000);
  expect(done.ai_model_used).toBe("simulator:sim-batch");
  const res = await fetch(`${stack.simulatorUrl}/v1/batches`, { headers: { authorization: "Bearer test" } });
  const batches = ((await res.json()) as { data: { id: string; metadata: Record<string, string> | null }[] }).data.filter((b) => b.metadata?.external_id === id);
  expect(batches).toHaveLength(1);
  const run = await runOf(stack, id);
  expect(run!.batchId).toBe(batches[0]!.id);
  expect(run!.steps.map((s) => s.batched)).toEqual([true]);
  expect(Number(done.cost)).toBeCloseTo(Number(run!.cost), 10);
}, 90_000);

test("a slow but live job is left alone: its step runs once", async () => {
  const { tenant, api } = await tenantWithApi();
  const type = marker("slow");
  // Longer than RECONCILE_STALE_AFTER_MS (3 s in the test stack), over several sweeps.
  await createWorkflow(api, tenant.projectId, type, [{ step_name: "Very slow", user: "[[sim:sleep=6000]][[sim:echo]]slow {title}" }]);
  const title = marker("article");
  const { external_id: id } = await createArticle(api, articleBody(tenant.projectId, { article_type: type, title }));
  const done = await waitForArticle(api, id, (x) => x.status === "completed" && x.ai_detection_score !== null, 40_000);
  expect(done.content).toBe(`slow ${title}`);
  expect(await callsStartingWith(stack, title, "slow")).toBe(1);
  expect((await runOf(stack, id))!.pickups).toBe(1);
}, 60_000);

test("a run still in flight whose job was wiped is not started a second time", async () => {
  const { tenant, api } = await tenantWithApi();
  const hook = webhookReceiver();
  try {
    const type = marker("orphan");
    await createWorkflow(api, tenant.projectId, type, [
      { step_name: "Very slow", user: "[[sim:sleep=6000]][[sim:echo]]slow {title}" },
      { step_name: "After", user: "[[sim:echo]]after {title}" },
    ]);
    const title = marker("article");
    const { external_id: id } = await createArticle(api, articleBody(tenant.projectId, { article_type: type, title, webhook_url: hook.url }));
    await waitForArticle(api, id, (x) => x.current_step === "Very slow", 20_000);
    // The runner keeps running the article in memory; only its queue entry is gone.
    await wipeQueue("generation");

    const done = await waitForArticle(api, id, (x) => x.status === "published", 60_000);
    expect(done.content).toBe(`after ${title}`);
    expect(await callsStartingWith(stack, title, "slow")).toBe(1);
    expect(await callsStartingWith(stack, title, "after")).toBe(1);
    expect((await runOf(stack, id))!.pickups).toBe(1);
    expect(deliveriesOf(hook, id)).toBe(1);
  } finally {
    hook.stop();
  }
}, 60_000);

/** The times the article's generation job was added to the queue, as the queue's event log records them. */
async function generationJobsAdded(externalId: string): Promise<number> {
  const entries = (await redis.xrange(`${queuePrefix(stack.redisPrefix, false)}:generation:events`, "-", "+")) as [string, string[]][];
  return entries.filter(([, fields]) => fields[1] === "added" && fields[3] === externalId).length;
}

test("an article that stays owed after its new job ends (nothing left to finish) is taken up less and less often, not at every sweep", async () => {
  const { tenant } = await tenantWithApi();
  // A completed article no run of this fleet generated (restored, or written by an older release),
  // without its originality check and without a version to check: the reconciler owes it its
  // hand-offs, and the job it gets finds no run to finish and nothing to score, so it stays owed.
  const sql = postgres(stack.databaseUrl, { max: 1, onnotice: () => {} });
  const settings = storedArticle({ accountId: tenant.accountId, projectId: tenant.projectId } as Tenant).settings;
  const [{ external_id: id }] = await sql`
    insert into article_store.articles (external_id, account_id, project_id, title, status, article_type, target_word_count, tone, point_of_view, language, settings, content, updated_at)
    values (gen_random_uuid(), ${tenant.accountId}, ${tenant.projectId}, 'Owed', 'completed', 'blog_post', 1000, 'friendly', 'second_person', 'en', ${sql.json(settings as never)}, 'Body', now() - interval '1 minute')
    returning external_id`;
  await sql.end();
  await eventually(() => generationJobsAdded(id), (n) => n >= 1, 20_000, "the reconciler to take the article up");
  // Sweeps run every second and the article is stale after 3 s: taken up at every sweep, it would
  // be taken up about ten times in the next ten seconds; waiting 3 s, then 6 s, twice at most.
  await Bun.sleep(10_000);
  const takeUps = await generationJobsAdded(id);
  console.log(`taken up ${takeUps} times in its first 10 s owed`);
  expect(takeUps).toBeGreaterThanOrEqual(2);
  expect(takeUps).toBeLessThanOrEqual(3);
}, 60_000);

/** Inserts a running article of the tenant last changed a minute ago: stale, with no job anywhere. */
async function insertLostArticle(tenant: Tenant, status: "queued" | "writing"): Promise<string> {
  const sql = postgres(stack.databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const [{ external_id: id }] = await sql`
      insert into article_store.articles (external_id, account_id, project_id, title, status, article_type, target_word_count, tone, point_of_view, language, settings, updated_at)
      values (gen_random_uuid(), ${tenant.accountId}, ${tenant.projectId}, 'Lost', ${status}, 'blog_post', 300, 'friendly', 'second_person', 'en', ${sql.json(storedArticle(tenant).settings as never)}, now() - interval '1 minute')
      returning external_id`;
    return id;
  } finally {
    await sql.end();
  }
}

test("a lost generation job taken up again joins its account's line, as a new article's job does", async () => {
  const { tenant } = await tenantWithApi();
  const line = `${queuePrefix(stack.redisPrefix, false)}:generation:fair:line:${tenant.accountId}`;
  // No runner feeds the lines meanwhile: the jobs stay where the reconciler puts them.
  await stack.kill("generationRunner");
  try {
    const ids = [await insertLostArticle(tenant, "queued"), await insertLostArticle(tenant, "queued")];
    await eventually(() => redis.zrange(line, "0", "-1"), (lined) => lined.length === 2, 20_000, "the lost jobs in their account's line");
    expect((await redis.zrange(line, "0", "-1")).sort()).toEqual([...ids].sort());
    for (const id of ids) expect(await jobExists("generation", id)).toBe(true);
    expect(await redis.llen(`${queuePrefix(stack.redisPrefix, false)}:generation:wait`)).toBe(0);
  } finally {
    await stack.start("generationRunner");
  }
  // A runner with free slots feeds the line.
  await eventually(() => redis.zcard(line), (n) => n === 0, 20_000, "the line fed to the runner");
}, 60_000);

test("a completed article owed its originality check with no run left to finish is checked by its take-up, and owes nothing after", async () => {
  const { tenant, api } = await tenantWithApi();
  const type = marker("owed-check");
  await createWorkflow(api, tenant.projectId, type, [{ step_name: "One", user: "[[sim:echo]]checked {title}" }]);
  const { external_id: id } = await createArticle(api, articleBody(tenant.projectId, { article_type: type, title: marker("article") }));
  const done = await waitForArticle(api, id, (x) => x.status === "completed" && x.ai_detection_score !== null, 30_000);
  // The score is lost (a restore from before scores went with versions): its run finished long ago.
  const sql = postgres(stack.databaseUrl, { max: 1, onnotice: () => {} });
  try {
    await sql`update article_store.articles set ai_detection_score = null, originality_checked_at = null, updated_at = now() - interval '1 minute' where external_id = ${id}`;
  } finally {
    await sql.end();
  }
  // Owed nothing once checked (the reconciler's predicate, schema.ts's unfinishedWork, no longer holds it).
  const check = postgres(stack.databaseUrl, { max: 1, onnotice: () => {} });
  try {
    const checkedAt = async () => (await check`select originality_checked_at from article_store.articles where external_id = ${id}`)[0]!.originality_checked_at;
    await eventually(checkedAt, (at) => at !== null, 20_000, "the owed check made");
  } finally {
    await check.end();
  }
  const checked = (await api.get(`/v1/articles/${id}`)).body.data;
  expect(checked.ai_detection_score).toBe(done.ai_detection_score);
  expect(checked.current_version_id).toBe(done.current_version_id);
}, 60_000);

test("a take-up whose re-enqueue failed is not counted: the next sweep takes the article up at once", async () => {
  const { tenant } = await tenantWithApi();
  // article-store's own reconciler is stopped, so the one made here is alone in taking the article up.
  await stack.kill("articleStore");
  const { sql, db } = articleStoreDatabase(stack, 2);
  const queues = ["generation", "webhooks"].map((name) => new Queue(name, { connection: redis, prefix: queuePrefix(stack.redisPrefix, false) }));
  const [generationQueue, webhookQueue] = queues as [Queue, Queue];
  // The first enqueue of the article's job is refused, as a Redis failing over would.
  let lost: string | undefined;
  let refusals = 0;
  const dispatch = new FairDispatch(redis, generationQueue);
  const flaky = Object.assign(Object.create(dispatch) as FairDispatch, {
    async enqueue(entries: LineEntry[]) {
      if (refusals === 0 && entries.some((entry) => entry.externalId === lost)) {
        refusals++;
        throw new Error("Redis refused the write");
      }
      return dispatch.enqueue(entries);
    },
  });
  const reconciler = startReconciler({
    db,
    redis,
    redisPrefix: `${stack.redisPrefix}-own-reconciler`,
    generationQueue,
    dispatch: flaky,
    webhookQueue,
    quota: quotaClient(stack, "article-store"),
    logger: createLogger("test-reconciler"),
    settings: { intervalMs: 3_600_000, staleAfterMs: 3000 },
  });
  try {
    const id = (lost = await insertLostArticle(tenant, "writing"));
    await reconciler.sweep();
    expect(refusals).toBe(1);
    expect(await jobExists("generation", id)).toBe(false);
    // At once, not RECONCILE_STALE_AFTER_MS later as for an article taken up.
    await reconciler.sweep();
    expect(await jobExists("generation", id)).toBe(true);
  } finally {
    await reconciler.stop();
    await Promise.all(queues.map((queue) => queue.close()));
    await sql.end();
    await stack.start("articleStore");
  }
}, 60_000);

test("an edit whose originality check was lost (the runner away when the gateway asked) is checked once the runner is back, with its brief checks", async () => {
  const { tenant, api } = await tenantWithApi();
  const type = marker("edited");
  await createWorkflow(api, tenant.projectId, type, [{ step_name: "Write", user: "[[sim:words=60]] write {title}" }]);
  const { external_id: id } = await createArticle(api, articleBody(tenant.projectId, { article_type: type }));
  const done = await waitForArticle(api, id, (x) => x.status === "completed" && x.ai_detection_score !== null, 30_000);
  await stack.kill("generationRunner");
  let edited;
  try {
    const res = await api.patch(`/v1/articles/${id}`, { content: "# A new headline\n\nA paragraph written by hand, with nothing generated in it." }, { headers: { "if-match": `"${done.current_version_id}"` } });
    expect(res.status).toBe(200);
    edited = res.body.data;
    // The edit answered; its check could not be asked for.
    expect(edited.ai_detection_score).toBeNull();
    expect(edited.originality_checked_at).toBeNull();
  } finally {
    await stack.start("generationRunner");
  }
  const checked = await waitForArticle(api, id, (x) => x.ai_detection_score !== null, 30_000);
  expect(checked.current_version_id).toBe(edited.current_version_id);
  expect(checked.status).toBe("completed");
  expect(typeof checked.originality_checked_at).toBe("string");
  expect((await api.get(`/v1/articles/${id}/versions/2`)).body.data.ai_detection_score).toBe(checked.ai_detection_score);
  expect(checked.quality.checks.find((c: { name: string }) => c.name === "length")).toMatchObject({ status: "failed", value: checked.actual_word_count });
}, 90_000);

test("a section revision whose job was lost with Redis runs once the reconciler hands its article's job out again", async () => {
  const { tenant, api } = await tenantWithApi();
  const created = await createArticle(api, articleBody(tenant.projectId, { target_word_count: 300 }));
  const done = await waitForArticle(api, created.external_id, (x) => x.status === "completed" && x.ai_detection_score !== null, 30_000);
  // The runner away, so the revision's job waits in the queue; then the queue is emptied.
  await stack.kill("generationRunner");
  try {
    const queued = await api.post(`/v1/articles/${done.external_id}/revisions`, { section: 2, action: "expand" });
    expect(queued.status).toBe(202);
    await eventually(() => jobExists("generation", done.external_id), (exists) => exists, 10_000, "the revision's job queued");
    await wipeQueue("generation");
  } finally {
    await stack.start("generationRunner");
  }
  const revised = await eventually(
    async () => (await api.get(`/v1/articles/${done.external_id}/revisions`)).body.data.revisions,
    (revisions: { status: string }[]) => revisions[0]?.status === "completed",
    30_000,
    "the revision completed",
  );
  expect(revised).toHaveLength(1);
  const versions = (await api.get(`/v1/articles/${done.external_id}/versions`)).body.data;
  expect(versions.map((v: { kind: string }) => v.kind)).toEqual(["generated", "section_rewrite"]);
}, 90_000);
