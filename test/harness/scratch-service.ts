// One of the stack's services started again on a throwaway database and Redis prefix of its own,
// beside the running stack: for calls whose effect must not reach the stack's data (an operator
// method that takes no input, so nothing can stop it before it creates what it creates). It
// migrates its schema at start, as in the stack; stop() ends it and drops what it wrote.
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import postgres from "postgres";
import { bundleProcess } from "../../deploy/local/process-bundles.ts";
import { RUNTIME_START_ENV, SERVICE_ENTRIES } from "../../deploy/local/stack.ts";
import { stopOnExit } from "../../deploy/local/private-servers.ts";
import type { ServiceUrls } from "../../services/kit/src/config.ts";
import { eventually } from "./eventually.ts";
import { freePort } from "./ports.ts";
import { dropTestData, type TestStack } from "./stack.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

export interface ScratchService {
  /** Its Connect URL, as the stack's *_URL settings name a service. */
  url: string;
  stop(): Promise<void>;
}

export async function startScratchService(stack: TestStack, name: keyof ServiceUrls, caller: string, env: Record<string, string> = {}): Promise<ScratchService> {
  const id = `${process.pid}_${randomBytes(3).toString("hex")}`;
  const database = new URL(stack.databaseUrl);
  database.pathname = `/scratch_${id}`;
  const admin = new URL(stack.databaseUrl);
  admin.pathname = "/postgres";
  const sql = postgres(admin.toString(), { max: 1, onnotice: () => {} });
  await sql.unsafe(`create database "scratch_${id}"`);
  await sql.end();
  const redisPrefix = `${stack.redisPrefix}-scratch-${id}`;
  const [connectPort, grpcPort] = [await freePort(), await freePort()];
  const child = Bun.spawn([process.execPath, await bundleProcess(root + SERVICE_ENTRIES[name])], {
    cwd: root,
    env: {
      ...RUNTIME_START_ENV,
      ...stack.env,
      DATABASE_URL: database.toString(),
      REDIS_PREFIX: redisPrefix,
      IDENTITY_TOKEN_FILE: await stack.identity.tokenFile(caller),
      CONNECT_PORT: String(connectPort),
      GRPC_PORT: String(grpcPort),
      METRICS_PORT: "0",
      ...env,
    },
    stdout: "ignore",
    stderr: "inherit",
  });
  const forget = stopOnExit(() => child.kill("SIGKILL"));
  const url = `http://127.0.0.1:${connectPort}`;
  const serving = () =>
    fetch(`${url}/grpc.health.v1.Health/Check`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" }).then((r) => r.status, () => 0);
  await eventually(serving, (status) => status === 200, 30_000, `${name} on a scratch database serving`);
  return {
    url,
    async stop() {
      child.kill("SIGTERM");
      await child.exited;
      forget();
      await dropTestData(database.toString(), redisPrefix);
    },
  };
}
