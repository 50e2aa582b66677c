// A private Redis Cluster of three masters made from the machine's redis-server, for the tests
// that prove scripts and keys are cluster-safe (every key a script touches in one hash slot).
// Stopped by stop(), and killed when the test process exits.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { Cluster } from "ioredis";
import { freePort, stopOnExit } from "../../deploy/local/private-servers.ts";
import { eventually } from "./eventually.ts";

export interface PrivateRedisCluster {
  /** The masters' ports. */
  ports: number[];
  /** A client of the cluster (closed by stop()). */
  connect(options?: { enableAutoPipelining?: boolean }): Cluster;
  stop(): Promise<void>;
}

export async function startRedisCluster(masters = 3): Promise<PrivateRedisCluster> {
  const dir = mkdtempSync(join(tmpdir(), "articles-redis-cluster-"));
  const servers: Subprocess[] = [];
  const clients: Cluster[] = [];
  const kill = () => {
    for (const server of servers) if (server.exitCode === null) server.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  };
  const forget = stopOnExit(kill);
  const ports: number[] = [];
  try {
    for (let i = 0; i < masters; i++) {
      const [port, busPort] = [await freePort(), await freePort()];
      ports.push(port);
      // prettier-ignore
      servers.push(Bun.spawn(["redis-server", "--port", String(port), "--cluster-port", String(busPort), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
        "--cluster-config-file", join(dir, `nodes-${port}.conf`), "--save", "", "--appendonly", "no", "--dir", dir], { stdout: "ignore", stderr: "ignore" }));
    }
    for (const port of ports) await eventually(() => ping(port), (ok) => ok, 10_000, `redis-server on ${port}`);
    const create = Bun.spawnSync(["redis-cli", "--cluster", "create", ...ports.map((p) => `127.0.0.1:${p}`), "--cluster-yes"], { stdout: "pipe", stderr: "pipe" });
    if (create.exitCode !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stderr.toString()}${create.stdout.toString()}`);
    await eventually(async () => Bun.spawnSync(["redis-cli", "-p", String(ports[0]), "cluster", "info"]).stdout.toString(), (info) => info.includes("cluster_state:ok"), 20_000, "the cluster's state ok");
  } catch (error) {
    kill();
    forget();
    throw error;
  }
  return {
    ports,
    connect(options = {}) {
      const client = new Cluster(ports.map((port) => ({ host: "127.0.0.1", port })), { ...options, redisOptions: { maxRetriesPerRequest: null } });
      clients.push(client);
      return client;
    },
    async stop() {
      for (const client of clients) client.disconnect();
      kill();
      forget();
    },
  };
}

async function ping(port: number): Promise<boolean> {
  return Bun.spawnSync(["redis-cli", "-p", String(port), "ping"]).stdout.toString().trim() === "PONG";
}
