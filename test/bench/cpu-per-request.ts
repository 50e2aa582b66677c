// `npm run bench:cpu -- get|list|workflows|post`: where one request's CPU goes. Boots the stack, loads one
// endpoint for 5 s (GET: one completed ~1,000-word article, 32 clients; list: a page of 20 such
// articles, 32 clients, of BENCH_WORDS words each when set; workflows: a page of a project's 20
// workflows of three steps, 32 clients; POST: creations on a one-step workflow, 16 clients, each with its own Idempotency-Key as P2 sends) and prints each
// process's CPU per request (from /proc), the load generator's, Postgres's and Redis's, Postgres
// commits and row changes per request, the calls between processes per request (from each
// service's metrics), the calls each process answered in over 0.1 s and 0.5 s (from its latency
// histograms: where a slow tail waits) and how long each process took to answer a metrics scrape after the load.
// With PROFILE=<process> (e.g. articleStore) that process also writes a profile to
// .local/profiles; with STRACE=<process>, strace counts that process's system calls during the
// load alone and their calls per request are printed (strace must be installed).
import { stackCredential } from "../harness/service-clients.ts";
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { startStack } from "../../deploy/local/stack.ts";
import { apiClient } from "../harness/http.ts";
import { dropTestData } from "../harness/stack.ts";
import { OperatorService } from "../../proto/gen/articles/accounts_billing/v1/operator_pb.ts";
import { serviceClient } from "../../services/kit/src/clients.ts";
import { benchDatabaseUrl } from "./context.ts";
import { cpuCounters, load, printTable } from "./measure.ts";

/** A metric line's labels, `a="x",b="y"` → { a: "x", b: "y" }. */
const labelsOf = (text: string): Record<string, string | undefined> => Object.fromEntries([...text.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));

/** Calls and requests each process answered in over 0.1 s and over 0.5 s, by method or route, since it started (from its metrics' text). */
function slowCalls(scrapes: Map<string, string>) {
  const rows: { "answered by": string; call: string; total: number; "over 0.1 s": number; "over 0.5 s": number }[] = [];
  for (const [processName, text] of scrapes) {
    const byCall = new Map<string, Map<string, number>>();
    for (const match of text.matchAll(/^(?:rpc_server|http_request)_duration_seconds_bucket\{([^}]*)\} (\d+)/gm)) {
      const labels = labelsOf(match[1]!);
      const call = labels.rpc_method ? `${labels.rpc_service?.split(".").at(-1)}/${labels.rpc_method}` : `${labels.method} ${labels.route}`;
      if (!byCall.has(call)) byCall.set(call, new Map());
      byCall.get(call)!.set(labels.le!, Number(match[2]));
    }
    for (const [call, buckets] of byCall) {
      const total = buckets.get("+Inf") ?? 0;
      rows.push({ "answered by": processName, call, total, "over 0.1 s": total - (buckets.get("0.1") ?? total), "over 0.5 s": total - (buckets.get("0.5") ?? total) });
    }
  }
  return rows.sort((a, b) => b["over 0.1 s"] - a["over 0.1 s"]);
}

const mode = (["post", "list", "workflows"] as const).find((m) => m === process.argv[2]) ?? "get";

const id = randomBytes(3).toString("hex");
const databaseUrl = benchDatabaseUrl(id);
const redisPrefix = `bench-${id}`;
const stack = await startStack({ randomPorts: true, output: "ignore", env: { DATABASE_URL: databaseUrl, REDIS_PREFIX: redisPrefix, LOG_LEVEL: "silent", OPENAI_API_KEY: undefined, OPENAI_BASE_URL: undefined } });
const sql = postgres(databaseUrl, { max: 1, onnotice: () => {} });
try {
  const operator = serviceClient(OperatorService, { baseUrl: stack.env.ACCOUNTS_BILLING_URL, credential: stackCredential(stack, "operator") });
  const tenant = await operator.createDemoTenant({});
  await operator.updatePlan({ planId: tenant.plan!.id, monthlyWords: 10_000_000_000n, requestsPerMinute: 2e9, requestsPerHour: 2e9, requestsPerDay: 2e9 });
  const api = apiClient(stack.baseUrl, tenant.token);
  const projectId = Number(tenant.project!.id);
  const step = { article_type: "bench_cpu", step_number: 1, step_name: "Write", system: "You write articles.", user: `[[sim:words=${Number(process.env.BENCH_WORDS ?? 1000)}]] Write about {title}.`, output_format: "markdown" };
  await api.post(`/v1/projects/${projectId}/workflows`, step);
  const body = (i: number) => ({ project_id: projectId, title: `Article ${i}`, article_type: "bench_cpu", target_word_count: 100, tone: "friendly", point_of_view: "second_person", language: "en" });
  const polled = (await api.post("/v1/articles", body(0))).body.data;
  if (mode === "workflows") {
    for (let w = 0; w < 19; w++) {
      for (const [n, user] of ["Outline {title}.", "Write about {title}.", "Polish the article."].entries()) {
        await api.post(`/v1/projects/${projectId}/workflows`, { ...step, article_type: `listed_${w}`, step_number: n + 1, step_name: `Step ${n + 1}`, user });
      }
    }
  }
  const listed = mode === "list" ? await Promise.all(Array.from({ length: 19 }, async (_, n) => (await api.post("/v1/articles", body(1000 + n))).body.data)) : [];
  for (const article of [polled, ...listed]) {
    while ((await api.get(`/v1/articles/${article.id}`)).body.data.status !== "completed") await Bun.sleep(100);
  }

  // Calls each service answered so far, by method, read from the processes' metrics ports; and
  // how long each process took to answer its scrape (a scrape runs on the process's event loop).
  const scrapeMs = new Map<string, number>();
  /** Each process's metrics as last scraped. */
  const scrapes = new Map<string, string>();
  const rpcCalls = async () => {
    const counts = new Map<string, number>();
    for (const [name, value] of Object.entries(stack.env)) {
      if (!name.endsWith("_METRICS_PORT") || value === "0") continue;
      const started = performance.now();
      const text = await fetch(`http://127.0.0.1:${value}/metrics`).then((r) => r.text(), () => "");
      const processName = name.replace(/_METRICS_PORT$/, "").toLowerCase();
      scrapeMs.set(processName, performance.now() - started);
      scrapes.set(processName, text);
      for (const match of text.matchAll(/^rpc_server_requests_total\{([^}]*)\} (\d+)/gm)) {
        const labels = labelsOf(match[1]!);
        const method = `${labels.rpc_service?.split(".").at(-1)}/${labels.rpc_method}`;
        counts.set(method, (counts.get(method) ?? 0) + Number(match[2]));
      }
    }
    return counts;
  };
  const tableStats = async () =>
    new Map((await sql`select schemaname || '.' || relname as name, n_tup_ins + n_tup_upd + n_tup_del as changes from pg_stat_user_tables`).map((r) => [r.name as string, Number(r.changes)]));
  const commits = async () => Number((await sql`select xact_commit from pg_stat_database where datname = current_database()`)[0].xact_commit);
  const callsBefore = await rpcCalls();
  const [tablesBefore, commitsBefore, cpu, selfBefore] = [await tableStats(), await commits(), cpuCounters(stack.processes), process.cpuUsage()];

  const traced = process.env.STRACE ? stack.processes.get(process.env.STRACE as never) : undefined;
  if (process.env.STRACE && !traced) throw new Error(`STRACE names no process of the stack (${[...stack.processes.keys()].join(", ")})`);
  const straceFile = `/tmp/strace-${id}.txt`;
  const strace = traced ? Bun.spawn(["strace", "-c", "-f", "-p", String(traced.pid), "-o", straceFile], { stdout: "ignore", stderr: "ignore" }) : undefined;
  if (strace) await Bun.sleep(500); // attached to every thread before the load starts

  let i = 1;
  const result =
    mode === "get"
      ? await load("GET /v1/articles/{id}", async () => (await api.get(`/v1/articles/${polled.id}`)).status === 200, { concurrency: 32, durationMs: 5000 })
      : mode === "workflows"
      ? await load("GET /v1/projects/{id}/workflows?per_page=20", async () => (await api.get(`/v1/projects/${projectId}/workflows?per_page=20`)).body.data?.length === 20, { concurrency: 32, durationMs: 5000 })
      : mode === "list"
      ? await load("GET /v1/articles?per_page=20", async () => (await api.get("/v1/articles?per_page=20&status=completed")).body.data?.length === 20, { concurrency: 32, durationMs: 5000 })
      : await load("POST /v1/articles", async () => (await api.post("/v1/articles", body(i++), { headers: { "idempotency-key": crypto.randomUUID() } })).status === 201, { concurrency: 16, durationMs: 5000 });
  const self = process.cpuUsage(selfBefore);
  if (strace) {
    strace.kill("SIGINT");
    await strace.exited;
  }
  const postgresMs = cpu.postgres();
  const redisMs = cpu.redis();
  if (mode === "post") await Bun.sleep(3000); // the created articles finish generating
  const [tablesAfter, commitsAfter, callsAfter] = [await tableStats(), await commits(), await rpcCalls()];

  const per = (n: number) => (n / result.requests).toFixed(3);
  console.log(`${result.name}: ${Math.round(result.perSecond)} req/s, p50 ${result.p50ms.toFixed(1)} ms, p99 ${result.p99ms.toFixed(1)} ms, ${result.errors} errors`);
  printTable([
    ...cpu.processes().map((p) => ({ process: p.name, "CPU ms per request": per(p.ms) })),
    { process: "postgres (all backends)", "CPU ms per request": per(postgresMs) },
    { process: "redis (the whole server)", "CPU ms per request": per(redisMs) },
    { process: "load generator", "CPU ms per request": per((self.user + self.system) / 1000) },
  ]);
  console.log(`\nPostgres commits per request: ${per(commitsAfter - commitsBefore)}`);
  printTable(
    [...tablesAfter]
      .map(([name, changes]) => ({ table: name, "rows changed per request": per(changes - (tablesBefore.get(name) ?? 0)) }))
      .filter((row) => Number(row["rows changed per request"]) > 0),
  );
  console.log();
  printTable(
    [...callsAfter]
      .map(([method, calls]) => ({ "calls between processes (server side)": method, "per request": per(calls - (callsBefore.get(method) ?? 0)) }))
      .filter((row) => Number(row["per request"]) > 0)
      .sort((a, b) => Number(b["per request"]) - Number(a["per request"])),
  );
  // The slow tail, by who answered it (server side, from each process's latency histograms):
  // a call slow here but quick in the process it called waited in the caller or on the way.
  console.log();
  printTable(slowCalls(scrapes).filter((row) => row["over 0.1 s"] > 0));
  console.log(`\nmetrics scrape after the load, ms: ${[...scrapeMs].map(([name, ms]) => `${name} ${ms.toFixed(1)}`).join(", ")}`);
  if (strace) {
    // strace -c: "% time, seconds, usecs/call, calls, errors, syscall" rows between dashed lines.
    const rows = (await Bun.file(straceFile).text()).split("\n").filter((line) => /^\s*[\d.]+\s+[\d.]+\s+\d+\s+\d+/.test(line) && !/total$/.test(line));
    console.log();
    printTable(
      rows
        .map((line) => line.trim().split(/\s+/))
        .map((f) => ({ [`${process.env.STRACE} system call`]: f.at(-1)!, "calls per request": per(Number(f[3])), "µs per call": f[2] }))
        .sort((a, b) => Number(b["calls per request"]) - Number(a["calls per request"]))
        .slice(0, 12),
    );
  }
  await Bun.sleep(500);
} finally {
  await sql.end();
  await stack.stop();
  await dropTestData(databaseUrl, redisPrefix);
}
