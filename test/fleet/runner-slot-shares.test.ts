// Worker slots shared between accounts over a fleet of three runner replicas, when the provider
// is not what limits them: each replica has 20 slots (60 in all) and every article is one 2 s
// call to an unlimited simulator. New articles wait in their accounts' lines and take free slots
// in the accounts' turns by their plans' weights (kit/src/fair-dispatch.ts), so a backlog of one
// account neither holds back another account's article nor takes more than its weight's share.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { apiClient, type ApiClient } from "../harness/http.ts";
import { eventually } from "../harness/eventually.ts";
import { startPrivateStack, type PrivateStack } from "../harness/private-infra.ts";
import { startRunnerReplicas, type RunnerReplica } from "../harness/runner-replicas.ts";
import type { TestStack } from "../harness/stack.ts";
import { createTenant } from "../harness/tenants.ts";
import { articleBody, createWorkflow, marker, waitForArticle } from "../api/generation-support.ts";
import { countIn, createArticles } from "../api/provider-support.ts";

const SLOTS_PER_REPLICA = 20;

let infra: PrivateStack;
let stack: TestStack;
const replicas: RunnerReplica[] = [];

beforeAll(async () => {
  infra = await startPrivateStack({ RUNNER_CONCURRENCY: String(SLOTS_PER_REPLICA) });
  stack = infra.stack;
  replicas.push(...(await startRunnerReplicas(stack, 2)));
}, 120_000);

afterAll(async () => {
  await Promise.all(replicas.map((replica) => replica.stop()));
  await infra?.stop();
}, 120_000);

/** A tenant whose articles are one 2 s call each. */
async function writer(shareWeight?: number) {
  const tenant = await createTenant(stack, { shareWeight });
  const api = apiClient(stack.baseUrl, tenant.token);
  const type = marker("slots");
  await createWorkflow(api, tenant.projectId, type, [{ step_name: "Write", user: `[[sim:sleep=2000]] [[sim:words=20]] write ${type}` }]);
  return { tenant, api, body: articleBody(tenant.projectId, { article_type: type }) };
}

/** When the first of the project's articles to complete after `since` completed (its updated_at: it has not changed since). */
async function firstCompletionAfter(api: ApiClient, projectId: number, since: number): Promise<number> {
  let first = Infinity;
  for (let page = 1; ; page++) {
    const { body } = await api.get(`/v1/articles?project_id=${projectId}&status=completed&per_page=100&page=${page}`);
    for (const article of body.data) {
      const at = Date.parse(article.updated_at);
      if (at > since) first = Math.min(first, at);
    }
    if (page >= body.meta.last_page) return first;
  }
}

test("while one account's 600 articles fill every worker slot of three replicas, another account's single article takes the next free slot", async () => {
  const burst = await writer();
  const burstAsked = Date.now();
  await createArticles(burst.api, 600, burst.body, 20);
  const burstCreatedMs = Date.now() - burstAsked;
  const other = await writer();
  const asked = Date.now();
  const [id] = await createArticles(other.api, 1, other.body);
  const done = await waitForArticle(other.api, id!, (a) => ["completed", "failed"].includes(a.status), 60_000);
  const tookMs = Date.now() - asked;
  const burstDone = await countIn(burst.api, burst.tenant.projectId, "completed");
  // How long it waited for a slot after the first one the burst freed once it was created: the
  // scheduler's part. The rest is its own 2 s call and the wait for the burst's first wave of 60
  // to end, which depends on how long the burst took to create.
  const started = Date.parse((await other.api.get(`/v1/articles/${id}/steps`)).body.data.steps[0].started_at);
  const freedAt = await firstCompletionAfter(burst.api, burst.tenant.projectId, Date.parse(done.created_at));
  console.log(
    `the other account's article took ${tookMs} ms (its step started ${started - Date.parse(done.created_at)} ms after creation, ${started - freedAt} ms after the burst's first slot freed since); ` +
      `${burstDone} of the burst's 600 had completed by then, created in ${burstCreatedMs} ms`,
  );
  expect(done.status).toBe("completed");
  // Its own 2 s call, and a slot freed within the next 2 s (60 slots end a call every 33 ms or so).
  expect(tookMs).toBeLessThan(5000);
  // The burst was still far from drained: in arrival order the article would have waited for it.
  expect(burstDone).toBeLessThan(450);
  await eventually(() => countIn(burst.api, burst.tenant.projectId, "completed"), (n) => n === 600, 120_000, "the burst completed");
}, 240_000);

test("two accounts with backlogs get the fleet's worker slots 3:1 by their plans' weights", async () => {
  const heavy = await writer(3);
  const light = await writer(1);
  // Both backlogs are created together, so neither starts alone.
  await Promise.all([createArticles(heavy.api, 480, heavy.body, 12), createArticles(light.api, 240, light.body, 6)]);
  const completed = () => Promise.all([countIn(heavy.api, heavy.tenant.projectId, "completed"), countIn(light.api, light.tenant.projectId, "completed")]);
  // Measured between two points while both backlogs last (60 slots of 2 s calls: 30 articles a second).
  const from = await eventually(completed, ([h, l]) => h + l >= 60, 60_000, "the first 60 articles");
  const to = await eventually(completed, ([h, l]) => h + l >= from[0] + from[1] + 240, 60_000, "240 more articles");
  const ratio = (to[0] - from[0]) / (to[1] - from[1]);
  console.log(`weights 3:1 over worker slots: ${to[0] - from[0]} and ${to[1] - from[1]} articles completed in the window, ${ratio.toFixed(2)}:1`);
  expect(to[1]).toBeLessThan(240);
  expect(ratio).toBeGreaterThan(3 * 0.9);
  expect(ratio).toBeLessThan(3 * 1.1);
  await eventually(completed, ([h, l]) => h === 480 && l === 240, 120_000, "both backlogs completed");
}, 240_000);
