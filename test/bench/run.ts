// `npm run bench`: boots a real stack on free ports (own database and Redis prefix) and prints
// throughput, latency and memory figures for the hot paths. Figures, not pass/fail.
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import IORedis from "ioredis";
import { startStack } from "../../deploy/local/stack.ts";
import { apiClient } from "../harness/http.ts";
import { renderTemplate } from "../../services/kit/src/prompt-template.ts";
import { RateLimiter } from "../../gateway/src/plugins/rate-limiter.ts";
import { OperatorService } from "../../proto/gen/articles/accounts_billing/v1/operator_pb.ts";
import { serviceClient } from "../../services/kit/src/clients.ts";
import { load, opsPerSecond, printTable, rssMiB } from "./measure.ts";

const DURATION_MS = Number(process.env.BENCH_SECONDS ?? 5) * 1000;
const IN_FLIGHT = Number(process.env.BENCH_IN_FLIGHT ?? 300);

/**
 * Creates IN_FLIGHT articles at once on a one-step workflow whose model call sleeps 3 s, and
 * measures creation throughput and the time until every article completed: with the runner's
 * concurrency of 200, that is two waves of 3 s when the runner really keeps them in flight.
 */
async function generationInFlight(api: ReturnType<typeof apiClient>, projectId: number, runnerPid: number) {
  const type = `bench_${id}`;
  const step = await api.post(`/v1/projects/${projectId}/workflows`, {
    article_type: type,
    step_number: 1,
    step_name: "Write",
    system: "You write short articles.",
    user: "[[sim:sleep=3000]] [[sim:words=60]] Write about {title}.",
    output_format: "markdown",
  });
  if (step.status !== 201) throw new Error(`workflow step: ${step.status} ${JSON.stringify(step.body)}`);
  const body = (i: number) => ({ project_id: projectId, title: `Bench article ${i}`, article_type: type, target_word_count: 100, tone: "friendly", point_of_view: "second_person", language: "en" });
  const started = performance.now();
  const created = await Promise.all(Array.from({ length: IN_FLIGHT }, (_, i) => api.post("/v1/articles", body(i))));
  const createSeconds = (performance.now() - started) / 1000;
  const failures = created.filter((r) => r.status !== 201).length;
  let peakRss = 0;
  let completed = 0;
  while (performance.now() - started < 120_000) {
    peakRss = Math.max(peakRss, rssMiB(runnerPid) ?? 0);
    const list = await api.get(`/v1/articles?status=completed&project_id=${projectId}&per_page=1`);
    completed = list.body.meta?.total ?? 0;
    if (completed >= IN_FLIGHT - failures) break;
    await Bun.sleep(250);
  }
  const totalSeconds = (performance.now() - started) / 1000;
  return {
    articles: IN_FLIGHT,
    "create failures": failures,
    "creations/s": Math.round(IN_FLIGHT / createSeconds),
    completed,
    "all completed after s": totalSeconds.toFixed(1),
    "runner peak RSS MiB": peakRss.toFixed(1),
  };
}
const id = randomBytes(3).toString("hex");
const databaseUrl = `postgres://postgres@127.0.0.1:5432/articles_bench_${id}`;
const redisPrefix = `bench-${id}`;

console.log("in-process figures");
const template = "Write about {title} for {target_keyword} in {language}. {requirements}\n\nOutline:\n{step_2_output}\n\nResearch:\n{research}";
const values = {
  title: "How to brew coffee",
  target_keyword: "coffee",
  article_type: "blog_post",
  tone: "friendly",
  point_of_view: "second_person",
  language: "en",
  target_word_count: 1500,
  requirements: "Keep it practical.",
  research: "x ".repeat(2000),
  step_outputs: { 2: "## One\n## Two\n".repeat(20) },
};
const flags = { include_requirements: true, include_research: true };
printTable([{ what: "renderTemplate (4 KB research, 2 outputs)", "ops/s": Math.round(opsPerSecond(100_000, () => renderTemplate(template, values, flags))) }]);

const stack = await startStack({ randomPorts: true, output: "ignore", env: { DATABASE_URL: databaseUrl, REDIS_PREFIX: redisPrefix, LOG_LEVEL: "silent" } });
try {
  const operator = serviceClient(OperatorService, { baseUrl: stack.env.ACCOUNTS_BILLING_URL, serviceToken: stack.env.SERVICE_TOKEN });
  const tenant = await operator.createDemoTenant({});
  await operator.updatePlan({ planId: tenant.plan!.id, requestsPerMinute: 10_000_000, requestsPerHour: 10_000_000, requestsPerDay: 10_000_000 });
  const api = apiClient(stack.baseUrl, tenant.token);

  const redis = new IORedis(stack.env.REDIS_URL ?? "redis://127.0.0.1:6379");
  const limiter = new RateLimiter(redis, redisPrefix);
  const caps = { perMinute: 1e9, perHour: 1e9, perDay: 1e9 };
  const limiterResult = await load("rate limiter (Redis script, 3 windows)", async () => (await limiter.hit(1, "bench", caps)).allowed, { concurrency: 32, durationMs: DURATION_MS });
  redis.disconnect();

  console.log(`\nwhole-stack figures (${DURATION_MS / 1000} s each, 2 cores shared by every process)`);
  const results = [limiterResult];
  results.push(await load("GET /user (auth via accounts-billing)", async () => (await api.get("/user")).status === 200, { concurrency: 32, durationMs: DURATION_MS }));
  results.push(await load("GET /v1/articles (auth, gate, rate limit, list)", async () => (await api.get("/v1/articles?per_page=20")).status === 200, { concurrency: 32, durationMs: DURATION_MS }));
  printTable(
    results.map((r) => ({
      what: r.name,
      requests: r.requests,
      "req/s": Math.round(r.perSecond),
      "p50 ms": r.p50ms.toFixed(2),
      "p99 ms": r.p99ms.toFixed(2),
      errors: r.errors,
    })),
  );

  console.log(`\ngeneration in flight: ${IN_FLIGHT} articles, each one model call that takes 3 s`);
  printTable([await generationInFlight(api, Number(tenant.project!.id), stack.processes.get("generationRunner")!.pid)]);

  console.log("\nresident memory after the load");
  printTable([...stack.processes.entries()].map(([name, p]) => ({ process: name, "RSS MiB": rssMiB(p.pid)?.toFixed(1) ?? "n/a" })));
} finally {
  await stack.stop();
  const sql = postgres("postgres://postgres@127.0.0.1:5432/postgres", { max: 1, onnotice: () => {} });
  await sql.unsafe(`drop database if exists "articles_bench_${id}" with (force)`);
  await sql.end();
  const redis = new IORedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
  const keys = await redis.keys(`${redisPrefix}:*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();
}
