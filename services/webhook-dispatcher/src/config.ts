// webhook-dispatcher settings from the environment, validated at start (one clear line naming a
// bad variable). The delivery timeout is the spec's fixed 30 s; attempts and backoff are
// configurable so tests and operators can shorten or lengthen the retry schedule.
import { ConfigError, envBool, envInt, envIntList, envOptional, type Env } from "../../kit/src/config.ts";
import { placeholderIn, secretBytesProblem } from "../../kit/src/secret-strength.ts";


export interface DispatcherSettings {
  /** ALLOW_PRIVATE_URLS: lets deliveries reach private and loopback addresses (local dev, tests). */
  allowPrivateUrls: boolean;
  /** WEBHOOK_ATTEMPTS: deliveries tried in all for one completion. */
  attempts: number;
  /** WEBHOOK_BACKOFF_MS: the wait before attempt k+1 is the k-th value; the last one repeats. */
  backoffMs: number[];
  /**
   * WEBHOOK_CONCURRENCY: deliveries one process keeps in flight. They are I/O, and their calls to
   * article-store and the database go in batches, so more in flight makes each delivery cheaper.
   */
  concurrency: number;
  /** AES-256-GCM key under which signing secrets and destination credentials are stored. */
  secretKey: Buffer;
  /** PUBLISH_ATTEMPTS: attempts of one publish request at a site that fails or is busy. */
  publishAttempts: number;
  /** PUBLISH_BACKOFF_MS: the wait before attempt k+1 (a longer Retry-After wins); the last repeats. */
  publishBackoffMs: number[];
  /** PUBLISH_CONCURRENCY: publications one process runs at once (each uploads images and a post). */
  publishConcurrency: number;
  /**
   * DISPATCHER_LOCK_MS: how long a job a dispatcher took stays its own without a renewal (renewed
   * at half of it while the job runs); a dispatcher that died has its jobs handed out again after it.
   */
  lockDurationMs: number;
}

export const DELIVERY_TIMEOUT_MS = 30_000;

/**
 * WEBHOOK_SECRET_KEY is the base64 of 32 random bytes (`openssl rand -base64 32`); a placeholder
 * or bytes that are plainly not random (all alike, a repeated pattern) are refused. It is
 * required: a key of its own, never derived from another credential, so that no other secret can
 * open the stored signing secrets (`npm start` keeps one in .local/, made on first use).
 */
export function signingSecretKey(env: Env): Buffer {
  const given = envOptional(env, "WEBHOOK_SECRET_KEY");
  if (given === undefined) throw new ConfigError("WEBHOOK_SECRET_KEY", "required: the key signing secrets are stored under, the base64 of 32 random bytes (e.g. `openssl rand -base64 32`)");
  const placeholder = placeholderIn(given);
  if (placeholder !== undefined) throw new ConfigError("WEBHOOK_SECRET_KEY", `a placeholder (it contains "${placeholder}"), not a key; use the base64 of 32 random bytes (e.g. \`openssl rand -base64 32\`)`);
  const key = /^[A-Za-z0-9+/_-]+={0,2}$/.test(given) ? Buffer.from(given, "base64") : Buffer.alloc(0);
  if (key.length !== 32) throw new ConfigError("WEBHOOK_SECRET_KEY", "expected the base64 of exactly 32 bytes (e.g. `openssl rand -base64 32`)");
  const problem = secretBytesProblem(key);
  if (problem !== undefined) throw new ConfigError("WEBHOOK_SECRET_KEY", `not a random key: ${problem}; use the base64 of 32 random bytes (e.g. \`openssl rand -base64 32\`)`);
  return key;
}

export function loadDispatcherSettings(env: Env): DispatcherSettings {
  const backoffMs = envIntList(env, "WEBHOOK_BACKOFF_MS", [10_000, 20_000, 30_000]);
  if (backoffMs.length === 0) throw new ConfigError("WEBHOOK_BACKOFF_MS", "needs at least one wait");
  const publishBackoffMs = envIntList(env, "PUBLISH_BACKOFF_MS", [30_000, 120_000, 600_000, 1_800_000]);
  if (publishBackoffMs.length === 0) throw new ConfigError("PUBLISH_BACKOFF_MS", "needs at least one wait");
  return {
    allowPrivateUrls: envBool(env, "ALLOW_PRIVATE_URLS", false),
    attempts: envInt(env, "WEBHOOK_ATTEMPTS", 3, { min: 1, max: 25 }),
    backoffMs,
    concurrency: envInt(env, "WEBHOOK_CONCURRENCY", 200, { min: 1, max: 1000 }),
    secretKey: signingSecretKey(env),
    publishAttempts: envInt(env, "PUBLISH_ATTEMPTS", 6, { min: 1, max: 25 }),
    publishBackoffMs,
    publishConcurrency: envInt(env, "PUBLISH_CONCURRENCY", 20, { min: 1, max: 200 }),
    lockDurationMs: envInt(env, "DISPATCHER_LOCK_MS", 30_000, { min: 5_000, max: 600_000 }),
  };
}

