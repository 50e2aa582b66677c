// `npm run chaos`: the whole stack on a private Postgres and Redis, N three-step articles with
// signed webhooks, and faults every few seconds (a random service or the gateway SIGKILLed and
// started again; Postgres restarted once; Redis restarted once with nothing kept). It waits until
// every article is terminal and delivered or the deadline passes, prints the figures, and exits
// non-zero when anything was stuck, lost or billed twice. Everything it starts is stopped, also
// on Ctrl-C and on failure.
import { randomBytes } from "node:crypto";
import postgres, { type Sql } from "postgres";
import { UsageError } from "../admin/args.ts";
import { adminClients } from "../admin/clients.ts";
import { startPrivatePostgres, startPrivateRedis, type PrivatePostgres, type PrivateRedis } from "../local/private-servers.ts";
import { startStack, type Stack } from "../local/stack.ts";
import { createArticle, type ArticleOrder, type Creation } from "./articles.ts";
import { FAULTS_PER_ROUND, startFaults, type Faults } from "./faults.ts";
import { USAGE, chaosSettings, type ChaosSettings } from "./settings.ts";
import { statusCounts, tally } from "./tally.ts";
import { createChaosTenant, promptTag } from "./tenant.ts";
import { openWebhookInbox, type WebhookInbox } from "./webhook-inbox.ts";


let settings: ChaosSettings;
try {
  settings = chaosSettings(process.argv.slice(2), process.env);
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  console.error(`${error.message}\n${USAGE}`);
  process.exit(2);
}

const began = Date.now();
const say = (line: string) => console.log(`[${((Date.now() - began) / 1000).toFixed(0).padStart(4)} s] ${line}`);

let pg: PrivatePostgres | undefined;
let redis: PrivateRedis | undefined;
let stack: Stack | undefined;
let inbox: WebhookInbox | undefined;
let sql: Sql | undefined;
let faults: Faults | undefined;
const starting = new AbortController();

let stopped: Promise<void> | undefined;
const stopEverything = () =>
  (stopped ??= (async () => {
    await faults?.stop().catch(() => {});
    inbox?.stop();
    await sql?.end({ timeout: 1 }).catch(() => {});
    await stack?.stop().catch(() => {});
    await redis?.cleanup().catch(() => {});
    await pg?.cleanup().catch(() => {});
  })());

const interrupt = async () => {
  if (stopped) return;
  say("interrupted: stopping everything this run started");
  starting.abort();
  await stopEverything();
  process.exit(130);
};
process.on("SIGINT", interrupt);
process.on("SIGTERM", interrupt);

async function main(): Promise<number> {
  const runId = randomBytes(3).toString("hex");
  say(`chaos run ${runId}: ${settings.articles} articles, a fault every ${settings.killEverySeconds} s, deadline ${settings.deadlineSeconds} s`);
  pg = await startPrivatePostgres();
  redis = await startPrivateRedis();
  say(`private Postgres on port ${pg.port}, private Redis on port ${redis.port}; starting the stack`);
  stack = await startStack({
    randomPorts: true,
    output: settings.logs ? "inherit" : "ignore",
    signal: starting.signal,
    env: {
      DATABASE_URL: pg.url("articles"),
      REDIS_URL: redis.url,
      REDIS_PREFIX: "chaos",
      // Always the bundled simulator: a chaos run must not spend a real provider's money.
      OPENAI_API_KEY: undefined,
      OPENAI_BASE_URL: undefined,
      LOG_LEVEL: settings.logs ? "info" : "silent",
      ALLOW_PRIVATE_URLS: "true",
      WEBHOOK_BACKOFF_MS: "1000,2000,4000",
      // Failed attempts retry after 1, 2, 4, 8 s: longer than a restart, so an article outlives it.
      GENERATION_RETRY_DELAY_MS: "1000",
      RUNNER_LOCK_MS: "5000",
      // Lost jobs are found within seconds rather than the production default's minutes.
      RECONCILE_INTERVAL_MS: "2000",
      RECONCILE_STALE_AFTER_MS: "10000",
    },
  });
  say(`stack ready at ${stack.baseUrl}`);

  inbox = openWebhookInbox();
  const admin = adminClients(stack.env, await stack.identity.credential("operator"));
  const tenant = await createChaosTenant(admin, stack.baseUrl, runId);
  inbox.trust(tenant.signingSecret);
  say(`tenant ready: account ${tenant.accountId}, project ${tenant.projectId}, workflow ${tenant.articleType} (3 steps)`);
  sql = postgres(pg.url("articles"), { max: 1, onnotice: () => {}, connect_timeout: 2 });

  const deadline = Date.now() + settings.deadlineSeconds * 1000;
  const order: ArticleOrder = { baseUrl: stack.baseUrl, token: tenant.token, projectId: tenant.projectId, articleType: tenant.articleType, webhookUrl: inbox.url, runId };
  // Creation is spread over a round of faults and one more fault's time (two a second at most),
  // so every fault lands while articles generate.
  const createEveryMs = Math.max(500, ((FAULTS_PER_ROUND + 1) * settings.killEverySeconds * 1000) / settings.articles);
  const creations: Creation[] = [];
  const creating = (async () => {
    const pending: Promise<void>[] = [];
    for (let n = 1; n <= settings.articles; n++) {
      pending.push(createArticle(order, n, deadline).then((c) => void creations.push(c)));
      await Bun.sleep(createEveryMs);
    }
    await Promise.all(pending);
  })();

  faults = startFaults({ stack, postgres: pg, redis, everyMs: settings.killEverySeconds * 1000, progress: () => creations.length / settings.articles, say });

  // Done when every article is created and failed or published, each published one's webhook
  // has arrived, and every fault has happened at least once.
  let lastReport = 0;
  while (Date.now() < deadline) {
    await Bun.sleep(2000);
    const counts = await statusCounts(sql, tenant.projectId).catch(() => undefined);
    if (!counts) continue;
    const published = counts.get("published") ?? 0;
    const created = creations.filter((c) => c.externalId).length;
    if (Date.now() - lastReport >= 10_000) {
      lastReport = Date.now();
      const statuses = [...counts].map(([status, n]) => `${status} ${n}`).join(", ");
      say(`created ${created}/${settings.articles}: ${statuses || "none yet"}; webhooks received for ${inbox.deliveries.size}`);
    }
    const settled = creations.length === settings.articles && published + (counts.get("failed") ?? 0) === created;
    if (settled && inbox.deliveries.size >= published && faults.everyFaultDone()) break;
  }
  const finished = Date.now() < deadline;
  say(finished ? "every article is terminal and delivered; stopping the faults (after the one under way)" : "deadline passed; stopping the faults (after the one under way)");
  const record = await faults.stop();
  await faults.restartTheDead();
  await creating;

  const { lines, problems } = await tally({
    sql,
    admin,
    accountId: tenant.accountId,
    projectId: tenant.projectId,
    simulatorUrl: stack.simulatorUrl!,
    promptTag: promptTag(runId),
    requested: settings.articles,
    creations,
    inbox,
    faults: record,
    seconds: (Date.now() - began) / 1000,
  });
  console.log(`\nchaos run ${runId}\n${lines.map((l) => `  ${l}`).join("\n")}`);
  console.log(problems.length ? `\nFAILED: ${problems.join("; ")}` : "\nPASSED: nothing stuck, lost or billed twice");
  return problems.length ? 1 : 0;
}

let code = 1;
try {
  code = await main();
} catch (error) {
  if (!starting.signal.aborted) console.error(`chaos run failed: ${(error as Error).message}`);
}
if (!stopped) say("stopping everything this run started");
await stopEverything();
process.exit(starting.signal.aborted ? 130 : code);
