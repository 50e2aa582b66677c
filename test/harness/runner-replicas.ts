// More generation-runner processes on a running stack's database and Redis, as the replicas of a
// Deployment would be: the tests that prove fairness, budgets and breakers hold across the fleet
// run several of them. Each is stopped by its own stop(), and killed when the test process exits.
import type { Subprocess } from "bun";
import { bundleProcess } from "../../deploy/local/process-bundles.ts";
import { RUNTIME_START_ENV, SERVICE_ENTRIES, type Stack } from "../../deploy/local/stack.ts";
import { stopOnExit } from "../../deploy/local/private-servers.ts";
import { eventually } from "./eventually.ts";
import { freePort } from "./private-infra.ts";

export interface RunnerReplica {
  process: Subprocess;
  metricsUrl: string;
  stop(): Promise<void>;
}

/** Starts one more runner replica (with `env` over the stack's) and waits until it serves its metrics. */
export async function startRunnerReplica(stack: Stack, env: Record<string, string> = {}): Promise<RunnerReplica> {
  const bundle = await bundleProcess(new URL(`../../${SERVICE_ENTRIES.generationRunner}`, import.meta.url).pathname);
  const [connectPort, grpcPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const child = Bun.spawn([process.execPath, bundle], {
    env: {
      ...RUNTIME_START_ENV,
      ...stack.env,
      IDENTITY_TOKEN_FILE: await stack.identity.tokenFile("generation-runner"),
      CONNECT_PORT: String(connectPort),
      GRPC_PORT: String(grpcPort),
      METRICS_PORT: String(metricsPort),
      BUN_CONFIG_MAX_HTTP_REQUESTS: "4096",
      ...env,
    },
    stdout: "ignore",
    stderr: "inherit",
  });
  const forget = stopOnExit(() => child.kill("SIGKILL"));
  const metricsUrl = `http://127.0.0.1:${metricsPort}`;
  await eventually(() => fetch(`${metricsUrl}/metrics`).then((r) => r.status, () => 0), (s) => s === 200, 30_000, "a runner replica up");
  return {
    process: child,
    metricsUrl,
    async stop() {
      child.kill("SIGTERM");
      await child.exited;
      forget();
    },
  };
}

/** Starts `n` runner replicas at once. */
export function startRunnerReplicas(stack: Stack, n: number, env: Record<string, string> = {}): Promise<RunnerReplica[]> {
  return Promise.all(Array.from({ length: n }, () => startRunnerReplica(stack, env)));
}

/** A counter of a replica's /metrics, summed over the series whose labels include `labels`. */
export async function metricOf(metricsUrl: string, name: string, labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}{`)) continue;
    const labelText = line.slice(name.length + 1, line.indexOf("}"));
    if (Object.entries(labels).every(([k, v]) => labelText.includes(`${k}="${v}"`))) sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}
