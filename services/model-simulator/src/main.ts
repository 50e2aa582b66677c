// Process entry for the bundled model simulator (used when no real provider key is configured).

import { startSimulator } from "./simulator.ts";

function portFromEnv(): number {
  const raw = process.env.SIMULATOR_PORT ?? "8090";
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port > 65535) {
    console.error(`SIMULATOR_PORT must be a port number from 0 to 65535 (got '${raw}')`);
    process.exit(1);
  }
  return port;
}

function batchDelayFromEnv(): number | undefined {
  const raw = process.env.SIMULATOR_BATCH_DELAY_MS;
  if (raw === undefined || raw === "") return undefined;
  if (!/^\d+$/.test(raw)) {
    console.error(`SIMULATOR_BATCH_DELAY_MS must be a whole number of milliseconds (got '${raw}')`);
    process.exit(1);
  }
  return Number(raw);
}

function perMinuteFromEnv(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return undefined;
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw)) || Number(raw) < 1) {
    console.error(`${name} must be a positive whole number (got '${raw}')`);
    process.exit(1);
  }
  return Number(raw);
}

const hostname = process.env.SIMULATOR_HOST || "127.0.0.1";
const provider = { requestsPerMinute: perMinuteFromEnv("SIMULATOR_REQUESTS_PER_MINUTE"), tokensPerMinute: perMinuteFromEnv("SIMULATOR_TOKENS_PER_MINUTE") };
const simulator = await startSimulator({ port: portFromEnv(), hostname, batchDelayMs: batchDelayFromEnv(), provider });
console.log(`model simulator listening on http://${hostname}:${simulator.port} (simulated models, not a real provider)`);

let stopping = false;
async function shutdown(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await simulator.stop();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown());
process.on("SIGINT", () => void shutdown());
