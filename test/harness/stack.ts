// The shared whole-stack harness: one real stack (every service process, the gateway, the model
// simulator) on free ports, its own fresh database and Redis prefix, started once per test run
// and stopped by the preload hook. A missing Postgres or Redis fails the tests with a clear message.
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import IORedis from "ioredis";
import { startStack, type Stack } from "../../deploy/local/stack.ts";
import { startMailbox, type Mailbox } from "./mailbox.ts";

export interface TestStack extends Stack {
  databaseUrl: string;
  redisPrefix: string;
  /** The SMTP server the stack mails through (SMTP_URL), when it has one. */
  mailbox?: Mailbox;
}

/** A stack's mail settings for a mailbox: what accounts-billing sends through. */
export const mailEnv = (mailbox: Mailbox): Record<string, string> => ({ SMTP_URL: mailbox.url, MAIL_FROM: "Article service <no-reply@example.test>", MAIL_BACKOFF_MS: "200,400" });

const ADMIN_DATABASE_URL = process.env.TEST_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

type Global = { __stack?: Promise<TestStack>; __stopStack?: () => Promise<void> };
const g = globalThis as Global;

/** Extra environment every test stack gets: fast webhooks, local receivers allowed. */
export const TEST_STACK_ENV: Record<string, string> = {
  ALLOW_PRIVATE_URLS: "true",
  WEBHOOK_ATTEMPTS: "3",
  WEBHOOK_BACKOFF_MS: "300,600",
  PUBLISH_BACKOFF_MS: "300,600",
  SIMULATOR_BATCH_DELAY_MS: "500",
  // Failed generations retry after 0.2, 0.4, 0.8, 1.6 s; a dead runner's job is taken over after 5 s.
  GENERATION_RETRY_DELAY_MS: "200",
  // A model call tries again 50 ms after a server error (doubling); an open breaker probes after half a second.
  PROVIDER_RETRY_DELAY_MS: "50",
  PROVIDER_BREAKER_COOLDOWN_MS: "500",
  RUNNER_LOCK_MS: "5000",
  // A run cut short by article-store or accounts-billing being away runs again after 0.25, 0.5, 1 s, … rather than 1, 2, 4 s.
  RUNNER_DEPENDENCY_WAIT_MS: "250",
  // article-store's endpoint hand-over pass every 0.5 s: a killed replica's mark is stale after 3 s, not 30.
  ENDPOINT_HANDOVER_PASS_MS: "500",
  // A dead dispatcher's deliveries and publications go out again after 5 s rather than 30.
  DISPATCHER_LOCK_MS: "5000",
  // The reconciler sweeps every second and takes up an article unchanged for 3 s with no live job.
  RECONCILE_INTERVAL_MS: "1000",
  RECONCILE_STALE_AFTER_MS: "3000",
  // Live streams send their heartbeat comment every second rather than every 15.
  EVENTS_HEARTBEAT_MS: "1000",
  LOG_LEVEL: "silent",
};

/**
 * Where the shared stack's processes write their warnings and errors (one file per process,
 * emptied when a run starts); CI prints what they hold when the suite fails
 * (.ci/test-log-digest).
 */
const TEST_LOG_DIR = fileURLToPath(new URL("../../.local/test-logs/", import.meta.url));

async function bootStack(): Promise<TestStack> {
  const id = `${process.pid}_${randomBytes(3).toString("hex")}`;
  const admin = new URL(ADMIN_DATABASE_URL);
  admin.pathname = `/articles_test_${id}`;
  const databaseUrl = admin.toString();
  const redisPrefix = `test-${id}`;
  let stack: Stack;
  // The shared stack mails through a real SMTP server of its own, on a free port.
  const mailbox = await startMailbox();
  try {
    const logs = process.env.STACK_LOGS ? undefined : TEST_LOG_DIR;
    if (logs) rmSync(logs, { recursive: true, force: true });
    stack = await startStack({
      randomPorts: true,
      output: process.env.STACK_LOGS ? "inherit" : "ignore",
      logDir: logs,
      env: { ...TEST_STACK_ENV, ...mailEnv(mailbox), LOG_LEVEL: process.env.STACK_LOGS ? (process.env.STACK_LOG_LEVEL ?? "info") : "warn", DATABASE_URL: databaseUrl, REDIS_URL, REDIS_PREFIX: redisPrefix, OPENAI_API_KEY: undefined, OPENAI_BASE_URL: undefined },
    });
  } catch (error) {
    await mailbox.close();
    throw new Error(`The test stack could not start (Postgres at 127.0.0.1:5432 and Redis at 127.0.0.1:6379 must be running): ${(error as Error).message}`);
  }
  g.__stopStack = async () => {
    await stack.stop();
    await mailbox.close();
    await dropTestData(databaseUrl, redisPrefix);
  };
  return { ...stack, databaseUrl, redisPrefix, mailbox };
}

/** Drops a stack's database and every Redis key under its prefix. */
export async function dropTestData(databaseUrl: string, redisPrefix: string): Promise<void> {
  // Dropped from its own server's maintenance database (a bench may run on another server).
  const admin = new URL(databaseUrl);
  const name = admin.pathname.slice(1);
  admin.pathname = "/postgres";
  const sql = postgres(admin.toString(), { max: 1, onnotice: () => {} });
  await sql.unsafe(`drop database if exists "${name}" with (force)`).catch(() => {});
  await sql.end();
  const redis = new IORedis(REDIS_URL);
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${redisPrefix}:*`, "COUNT", 500);
    if (keys.length) await redis.del(...keys);
    cursor = next;
  } while (cursor !== "0");
  redis.disconnect();
}

/** The running stack, started on first use. */
export function useStack(): Promise<TestStack> {
  g.__stack ??= bootStack();
  return g.__stack;
}
