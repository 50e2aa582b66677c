// generation-runner settings, validated at start (one clear line naming a bad variable).
import { ConfigError, envBool, envInt, envOptional, envString } from "../../kit/src/config.ts";
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
}

export function loadRunnerConfig(env: Env = process.env): RunnerConfig {
  const providers = providersFromEnv(env);
  const simulator = providers.has("simulator");
  const openAiKey = envOptional(env, "OPENAI_API_KEY");
  return {
    concurrency: envInt(env, "RUNNER_CONCURRENCY", 1000, { min: 1, max: 10_000 }),
    memorySoftLimitBytes: envInt(env, "RUNNER_MEMORY_MIB", 150, { min: 64, max: 1_048_576 }) * 2 ** 20,
    lockDurationMs: envInt(env, "RUNNER_LOCK_MS", 20_000, { min: 5_000, max: 600_000 }),
    clients: new ModelClients(providers),
    imageModel: envString(env, "IMAGE_MODEL", simulator ? "simulator:sim-image" : "openai:gpt-image-1"),
    batchPollMs: envInt(env, "RUNNER_BATCH_POLL_MS", 1_000, { min: 100 }),
    batchPollMaxMs: envInt(env, "RUNNER_BATCH_POLL_MAX_MS", 60_000, { min: 100 }),
    detector: detectorFromEnv(env),
    allowPrivateUrls: envBool(env, "ALLOW_PRIVATE_URLS", false),
    research: researchFromEnv(env),
    realOpenAi: openAiKey !== undefined && openAiKey !== "simulator",
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
