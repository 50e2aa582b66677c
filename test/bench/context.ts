// What every benchmark section gets: the running stack, a tenant on a plan with no practical
// rate caps, a public API client, and a direct Postgres connection to the stack's database for
// baselines and seeding (never used by the product path being measured).
import { stackCredential } from "../harness/service-clients.ts";
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { startStack, type Stack, type StackOptions } from "../../deploy/local/stack.ts";
import { apiClient } from "../harness/http.ts";
import { dropTestData } from "../harness/stack.ts";
import { OperatorService } from "../../proto/gen/articles/accounts_billing/v1/operator_pb.ts";
import { serviceClient } from "../../services/kit/src/clients.ts";

/**
 * The bench's database, on the machine's Postgres unless BENCH_POSTGRES names another server (for
 * example a private one with pg_stat_statements loaded, to see which statements take its time).
 */
export function benchDatabaseUrl(id: string, postgresServer = process.env.BENCH_POSTGRES ?? "postgres://postgres@127.0.0.1:5432"): string {
  const server = new URL(postgresServer);
  server.pathname = `/articles_bench_${id}`;
  return server.toString();
}

export interface BenchContext {
  stack: Stack;
  databaseUrl: string;
  redisPrefix: string;
  /** A direct connection to the stack's database (pool 10 unless opened with another), for baselines and seeding. */
  sql: postgres.Sql;
  api: ReturnType<typeof apiClient>;
  token: string;
  accountId: number;
  userId: number;
  projectId: number;
  /** Seconds each throughput load runs (BENCH_SECONDS, default 10). */
  seconds: number;
}

export interface BenchStack {
  stack: Stack;
  /** Creates the bench tenant (call once the idle figures are read). */
  tenant(): Promise<BenchContext>;
  close(): Promise<void>;
}

/**
 * Boots the stack `npm start` runs on free ports, with its own database and Redis prefix (both
 * dropped by close). `env` is laid over the bench's settings; `sqlPoolSize` bounds the bench's own
 * connection to the database; `postgresServer` puts the database on another server than the
 * bench's (a second stack beside the bench's would take most of one server's connections).
 */
export async function openBenchStack(
  opts: { seconds: number; env?: Record<string, string | undefined>; sqlPoolSize?: number; postgresServer?: string } & Pick<StackOptions, "runUnder" | "readyTimeoutMs">,
): Promise<BenchStack> {
  const id = randomBytes(3).toString("hex");
  const databaseUrl = benchDatabaseUrl(id, opts.postgresServer);
  const redisPrefix = `bench-${id}`;
  const stack = await startStack({
    randomPorts: true,
    output: "ignore",
    runUnder: opts.runUnder,
    readyTimeoutMs: opts.readyTimeoutMs,
    env: {
      DATABASE_URL: databaseUrl,
      REDIS_PREFIX: redisPrefix,
      LOG_LEVEL: "silent",
      ALLOW_PRIVATE_URLS: "true",
      OPENAI_API_KEY: undefined,
      OPENAI_BASE_URL: undefined,
      // P6 seeds queued, writing and polishing articles straight into the database, with no job
      // behind them: stranded work, which the reconciler would rightly take up (5,000 a minute) in
      // the middle of the timings. Finished articles, the bulk of the seed, are nothing to it.
      RECONCILE_INTERVAL_MS: process.env.RECONCILE_INTERVAL_MS ?? "3600000",
      ...opts.env,
    },
  });
  const sql = postgres(databaseUrl, { max: opts.sqlPoolSize ?? 10, onnotice: () => {} });
  const close = async () => {
    process.off("SIGINT", interrupted);
    process.off("SIGTERM", interrupted);
    await sql.end();
    await stack.stop();
    await dropTestData(databaseUrl, redisPrefix);
  };
  // A bench stopped with Ctrl-C or SIGTERM stops its stack and drops its data, as one that ends does.
  const interrupted = () => void close().finally(() => process.exit(130));
  process.once("SIGINT", interrupted);
  process.once("SIGTERM", interrupted);
  return {
    stack,
    async tenant() {
      const operator = serviceClient(OperatorService, { baseUrl: stack.env.ACCOUNTS_BILLING_URL, credential: stackCredential(stack, "operator") });
      const tenant = await operator.createDemoTenant({});
      // No practical limits: the benches measure the stack, not a plan (a plan without articles_in_flight has no cap, so P4 keeps a thousand articles in flight; P7 holds thousands of open event streams).
      await operator.updatePlan({
        planId: tenant.plan!.id,
        monthlyWords: 10_000_000_000n,
        requestsPerMinute: 2_000_000_000,
        requestsPerHour: 2_000_000_000,
        requestsPerDay: 2_000_000_000,
        caps: { openEventStreams: 1_000_000 },
      });
      return {
        stack,
        databaseUrl,
        redisPrefix,
        sql,
        api: apiClient(stack.baseUrl, tenant.token),
        token: tenant.token,
        accountId: Number(tenant.account!.id),
        userId: Number(tenant.user!.id),
        projectId: Number(tenant.project!.id),
        seconds: opts.seconds,
      };
    },
    close,
  };
}
