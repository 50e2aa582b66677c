// A gateway of its own beside the test stack, for settings the stack's gateway does not carry
// (PUBLIC_GRPC_WORKLOADS, an https PUBLIC_BASE_URL): the same services, its own ports; ready when its /readyz answers.
import { fileURLToPath } from "node:url";
import type { Subprocess } from "bun";
import { eventually } from "./eventually.ts";
import { freePort } from "./ports.ts";
import type { TestStack } from "./stack.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

export interface OwnGateway {
  /** Its HTTP API, http://127.0.0.1:<port>. */
  baseUrl: string;
  grpcPort: number;
  /** Its metrics port, or 0 when off. */
  metricsPort: number;
  /** What it wrote on stdout so far (its log lines down to LOG_LEVEL), when asked to keep it. */
  log(): string;
  stop(): Promise<void>;
}

export async function startOwnGateway(stack: TestStack, env: Record<string, string>, opts: { metrics?: boolean; keepLog?: boolean } = {}): Promise<OwnGateway> {
  const [port, grpcPort, metricsPort] = [await freePort(), await freePort(), opts.metrics ? await freePort() : 0];
  const gateway: Subprocess<"ignore", "pipe" | "ignore", "inherit"> = Bun.spawn([process.execPath, "gateway/src/main.ts"], {
    cwd: root,
    env: {
      ...stack.env,
      IDENTITY_TOKEN_FILE: await stack.identity.tokenFile("gateway"),
      PORT: String(port),
      GRPC_PORT: String(grpcPort),
      METRICS_PORT: String(metricsPort),
      ...env,
    },
    stdout: opts.keepLog ? "pipe" : "ignore",
    stderr: "inherit",
  });
  let log = "";
  if (opts.keepLog) {
    void (async () => {
      const reader = (gateway.stdout as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) log += decoder.decode(chunk.value, { stream: true });
    })();
  }
  try {
    await eventually(() => fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.status, () => 0), (status) => status === 200, 30_000, "the test's own gateway to be ready");
  } catch (error) {
    // A gateway that never became ready is nobody's to stop: it would outlive the test run.
    gateway.kill("SIGKILL");
    await gateway.exited;
    throw error;
  }
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    grpcPort,
    metricsPort,
    log: () => log,
    stop: async () => {
      gateway.kill("SIGTERM");
      await gateway.exited;
    },
  };
}
