// What every benchmark section gets: the running stack, a tenant on a plan with no practical
// rate caps, a public API client, and a direct Postgres connection to the stack's database for
// baselines and seeding (never used by the product path being measured).
import type postgres from "postgres";
import type { Stack } from "../../deploy/local/stack.ts";
import type { apiClient } from "../harness/http.ts";

export interface BenchContext {
  stack: Stack;
  databaseUrl: string;
  redisPrefix: string;
  /** A direct connection to the stack's database (pool 10), for baselines and seeding. */
  sql: postgres.Sql;
  api: ReturnType<typeof apiClient>;
  token: string;
  accountId: number;
  userId: number;
  projectId: number;
  /** Seconds each throughput load runs (BENCH_SECONDS, default 10). */
  seconds: number;
}
