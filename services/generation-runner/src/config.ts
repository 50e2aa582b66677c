// generation-runner settings, validated at start (one clear line naming a bad variable).
import { ConfigError, envBool, envInt, envOptional, envString, envUrl, loadReconcileSettings } from "../../kit/src/config.ts";
import type { S3Settings } from "./domain/image-store.ts";
import { originalityDetector, type OriginalityDetector } from "./domain/originality.ts";
import { ModelClients, providersFromEnv } from "./domain/providers.ts";
import { researchToolsFromEnv, type ResearchTools } from "./research/article-research.ts";

type Env = Record<string, string | undefined>;

export interface RunnerConfig {
  /** Articles in flight per process: model calls are I/O, so a thousand fit. */
  concurrency: number;
  /** Resident memory (bytes) past which the runner collects its garbage at once rather than when Bun would. */
  memorySoftLimitBytes: number;
  /** How long a job's lock lasts without renewal: a dead worker's article is picked up again after about this long. */
  lockDurationMs: number;
  clients: ModelClients;
  /** provider:model used for article images. */
  imageModel: string;
  /** PUBLIC_BASE_URL: where clients reach the gateway; image URLs in content start with it. */
  publicBaseUrl: string;
  /** The S3-compatible bucket for image bytes; undefined: the runner's own Postgres table. */
  imageBucket?: S3Settings;
  /** First wait between polls of a provider batch; doubles up to batchPollMaxMs. */
  batchPollMs: number;
  batchPollMaxMs: number;
  /** ORIGINALITY_DETECTOR: "heuristic" (built in, the default). */
  detector: OriginalityDetector;
  allowPrivateUrls: boolean;
  /** Search engine and page fetcher for research; undefined when none is configured. */
  research?: ResearchTools;
  /** Whether a real OpenAI key (not the simulator's) is configured: the seed activates openai models then. */
  realOpenAi: boolean;
  /**
   * A run that reported nothing for this long repeats its latest progress report: a quarter of
   * RECONCILE_STALE_AFTER_MS, so article-store's reconciler never takes a slow step for a stranded article.
   */
  progressKeepAliveMs: number;
  /** PROVIDER_OUTAGE_LIMIT_MS: how long an article waits out a provider that keeps failing before it fails. */
  outageLimitMs: number;
  /** PROVIDER_RETRY_DELAY_MS: first wait before a model call goes again after a server error (doubling). */
  providerRetryDelayMs: number;
  /** RUNNER_DEPENDENCY_WAIT_MS: first wait before a run cut short by article-store or accounts-billing being away runs again (doubling to 30 s). */
  dependencyWaitMs: number;
  /** PROVIDER_BREAKER_COOLDOWN_MS: how long an opened circuit breaker waits before its first probe (doubling up to the probe cadence's bound). */
  breakerCooldownMs: number;
  /** SEARCH_REQUESTS_PER_MINUTE: the research search engine's limit (null: learned from its answers). */
  searchRequestsPerMinute: number | null;
  /** RUNNER_ACCOUNT_IN_FLIGHT: an account's articles in flight at once when its plan sets no cap; undefined (the default): no cap. */
  accountInFlight?: number;
  /** QUALITY_REPAIR_CALLS: the most repair calls one article gets for its failed brief checks (0: none). */
  repairCalls: number;
}

export function loadRunnerConfig(env: Env = process.env): RunnerConfig {
  const providers = providersFromEnv(env);
  const simulator = providers.has("simulator");
  const openAiKey = envOptional(env, "OPENAI_API_KEY");
  return {
    concurrency: envInt(env, "RUNNER_CONCURRENCY", 1000, { min: 1, max: 10_000 }),
    memorySoftLimitBytes: envInt(env, "RUNNER_MEMORY_MIB", 400, { min: 64, max: 1_048_576 }) * 2 ** 20,
    lockDurationMs: envInt(env, "RUNNER_LOCK_MS", 20_000, { min: 5_000, max: 600_000 }),
    clients: new ModelClients(providers),
    imageModel: envString(env, "IMAGE_MODEL", simulator ? "simulator:sim-image" : "openai:gpt-image-1"),
    publicBaseUrl: publicBaseUrlFromEnv(env),
    imageBucket: imageBucketFromEnv(env),
    batchPollMs: envInt(env, "RUNNER_BATCH_POLL_MS", 1_000, { min: 100 }),
    batchPollMaxMs: envInt(env, "RUNNER_BATCH_POLL_MAX_MS", 60_000, { min: 100 }),
    detector: detectorFromEnv(env),
    allowPrivateUrls: envBool(env, "ALLOW_PRIVATE_URLS", false),
    research: researchFromEnv(env),
    realOpenAi: openAiKey !== undefined && openAiKey !== "simulator",
    progressKeepAliveMs: Math.floor(loadReconcileSettings(env).staleAfterMs / 4),
    outageLimitMs: envInt(env, "PROVIDER_OUTAGE_LIMIT_MS", 6 * 3_600_000, { min: 10_000, max: 7 * 86_400_000 }),
    providerRetryDelayMs: envInt(env, "PROVIDER_RETRY_DELAY_MS", 1000, { min: 10, max: 60_000 }),
    dependencyWaitMs: envInt(env, "RUNNER_DEPENDENCY_WAIT_MS", 1000, { min: 10, max: 30_000 }),
    breakerCooldownMs: envInt(env, "PROVIDER_BREAKER_COOLDOWN_MS", 2000, { min: 100, max: 600_000 }),
    searchRequestsPerMinute: envOptional(env, "SEARCH_REQUESTS_PER_MINUTE") === undefined ? null : envInt(env, "SEARCH_REQUESTS_PER_MINUTE", 60, { min: 1, max: 1_000_000 }),
    repairCalls: envInt(env, "QUALITY_REPAIR_CALLS", 3, { min: 0, max: 20 }),
    accountInFlight: envOptional(env, "RUNNER_ACCOUNT_IN_FLIGHT") === undefined ? undefined : envInt(env, "RUNNER_ACCOUNT_IN_FLIGHT", 0, { min: 1, max: 100_000 }),
  };
}

function detectorFromEnv(env: Env): OriginalityDetector {
  try {
    return originalityDetector(envString(env, "ORIGINALITY_DETECTOR", "heuristic"));
  } catch (error) {
    throw new ConfigError("ORIGINALITY_DETECTOR", (error as Error).message.replace(/^ORIGINALITY_DETECTOR: /, ""));
  }
}

function researchFromEnv(env: Env): ResearchTools | undefined {
  try {
    return researchToolsFromEnv(env, envBool(env, "ALLOW_PRIVATE_URLS", false));
  } catch (error) {
    throw new ConfigError("SEARCH_PROVIDER", (error as Error).message);
  }
}

/** The gateway's public address, without a trailing slash; next to a local gateway, its port on this machine. */
export function publicBaseUrlFromEnv(env: Env): string {
  const url = envUrl(env, "PUBLIC_BASE_URL", `http://127.0.0.1:${envOptional(env, "PORT") ?? 8080}`, ["http:", "https:"]);
  if (/[?#]/.test(url)) throw new ConfigError("PUBLIC_BASE_URL", "must not carry a query or fragment");
  return url.replace(/\/+$/, "");
}

const S3_VARIABLES = ["S3_ENDPOINT", "S3_REGION", "S3_ACCESS_KEY_ID", "S3_SECRET_ACCESS_KEY", "S3_SESSION_TOKEN"];

/** The bucket when S3_BUCKET is set; the other S3_* settings are then checked (never echoing a credential). */
export function imageBucketFromEnv(env: Env): S3Settings | undefined {
  const bucket = envOptional(env, "S3_BUCKET");
  if (bucket === undefined) {
    const stray = S3_VARIABLES.find((name) => envOptional(env, name) !== undefined);
    if (stray) throw new ConfigError("S3_BUCKET", `required when ${stray} is set (image bytes go to that bucket)`);
    return undefined;
  }
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) throw new ConfigError("S3_BUCKET", `not a valid bucket name: "${bucket}" (3 to 63 lower-case letters, digits, dots or dashes)`);
  const accessKeyId = envOptional(env, "S3_ACCESS_KEY_ID");
  const secretAccessKey = envOptional(env, "S3_SECRET_ACCESS_KEY");
  if (accessKeyId === undefined) throw new ConfigError("S3_ACCESS_KEY_ID", "required with S3_BUCKET");
  if (secretAccessKey === undefined) throw new ConfigError("S3_SECRET_ACCESS_KEY", "required with S3_BUCKET");
  const region = envString(env, "S3_REGION", "us-east-1");
  if (!/^[a-z0-9-]{2,32}$/.test(region)) throw new ConfigError("S3_REGION", `not a region name: "${region}"`);
  const endpoint = envOptional(env, "S3_ENDPOINT") === undefined ? undefined : envUrl(env, "S3_ENDPOINT", "", ["http:", "https:"]);
  return { bucket, endpoint, region, accessKeyId, secretAccessKey, sessionToken: envOptional(env, "S3_SESSION_TOKEN") };
}
