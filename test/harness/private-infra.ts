// A stack of its own on a private Postgres and Redis, for the tests that restart, stop or cut off
// the infrastructure under it. The private servers themselves live in deploy/local/private-servers.ts
// (shared with `npm run chaos`); the machine's shared Postgres and Redis are never touched.
// Whatever starts here is stopped by `stop()`, and also when the test process exits without calling it.
import { startStack, type Stack } from "../../deploy/local/stack.ts";
import { startPrivatePostgres, startPrivateRedis, stopOnExit, type PrivatePostgres, type PrivateRedis } from "../../deploy/local/private-servers.ts";
import { startRedisCluster, type PrivateRedisCluster } from "./redis-cluster.ts";
import { TEST_STACK_ENV, type TestStack } from "./stack.ts";

export { freePort, startPrivatePostgres, startPrivateRedis, type PrivatePostgres, type PrivateRedis } from "../../deploy/local/private-servers.ts";

/** A stack of its own on a private Postgres and Redis, for tests that break them. */
export interface PrivateStack {
  stack: TestStack;
  postgres: PrivatePostgres;
  redis: PrivateRedis;
  /** The stack's processes that are no longer running, with their exit codes. */
  exited(): string[];
  /** Stops the stack, then the private servers; safe to call after a failed test. */
  stop(): Promise<void>;
}

export async function startPrivateStack(env: Record<string, string> = {}): Promise<PrivateStack> {
  const { stack, postgres, redis, exited, stop } = await startStackOn(startPrivateRedis, env);
  return { stack, postgres, redis, exited, stop };
}

/** A stack of its own on a private Postgres and a private Redis Cluster (three masters, a replica each). */
export interface ClusterStack {
  stack: TestStack;
  cluster: PrivateRedisCluster;
  exited(): string[];
  stop(): Promise<void>;
}

export async function startClusterStack(env: Record<string, string> = {}): Promise<ClusterStack> {
  const { stack, redis, exited, stop } = await startStackOn(async () => {
    const cluster = await startRedisCluster(3, 1);
    return Object.assign(cluster, { cleanup: () => cluster.stop() });
  }, env);
  return { stack, cluster: redis, exited, stop };
}

async function startStackOn<R extends { url: string; cleanup(): Promise<void> }>(startRedis: () => Promise<R>, env: Record<string, string>) {
  const pg = await startPrivatePostgres();
  let redis: R | undefined;
  let stack: Stack | undefined;
  let keptStack: (() => void) | undefined;
  const killStack = () => {
    for (const child of stack?.processes.values() ?? []) if (child.exitCode === null) child.kill("SIGKILL");
  };
  const stop = async () => {
    keptStack?.();
    await stack?.stop().catch(() => {});
    await redis?.cleanup();
    await pg.cleanup();
  };
  try {
    redis = await startRedis();
    keptStack = stopOnExit(killStack);
    const databaseUrl = pg.url("articles");
    const redisPrefix = "faults";
    stack = await startStack({
      randomPorts: true,
      output: process.env.STACK_LOGS ? "inherit" : "ignore",
      env: {
        ...TEST_STACK_ENV,
        ...(process.env.STACK_LOGS ? { LOG_LEVEL: process.env.STACK_LOG_LEVEL ?? "info" } : {}),
        DATABASE_URL: databaseUrl,
        REDIS_URL: redis.url,
        REDIS_PREFIX: redisPrefix,
        OPENAI_API_KEY: undefined,
        OPENAI_BASE_URL: undefined,
        // Retries of a failed generation attempt span about 15 s (1, 2, 4, 8 s), longer than a
        // restart, as the production default's 30 s does: an article outlives a short fault.
        GENERATION_RETRY_DELAY_MS: "1000",
        // The reconciler sweeps every second and takes up an article left alone for 3 s.
        RECONCILE_INTERVAL_MS: "1000",
        RECONCILE_STALE_AFTER_MS: "3000",
        ...env,
      },
    });
    const running = stack;
    return {
      stack: { ...running, databaseUrl, redisPrefix },
      postgres: pg,
      redis,
      exited: () => [...running.processes].filter(([, child]) => child.exitCode !== null).map(([name, child]) => `${name} (exit ${child.exitCode})`),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
