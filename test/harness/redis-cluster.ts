// A private Redis Cluster made from the machine's redis-server (three masters, and a replica of
// each when asked), for the tests that prove scripts and keys are cluster-safe (every key a script
// touches in one hash slot) and that the stack rides out a master's failover. Stopped by stop(),
// and killed when the test process exits.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { Cluster } from "ioredis";
import { freePort, stopOnExit } from "../../deploy/local/private-servers.ts";
import { eventually } from "./eventually.ts";

export interface PrivateRedisCluster {
  /** The nodes' ports (masters first, as created). */
  ports: number[];
  /** REDIS_URL for a stack on this cluster. */
  url: string;
  /** A client of the cluster (closed by stop()). */
  connect(options?: { enableAutoPipelining?: boolean }): Cluster;
  /**
   * Promotes the replica of the master that holds `key`'s slot (CLUSTER FAILOVER, which waits for
   * the replica to catch up: nothing written is lost) and waits until every node sees the change.
   * Returns the ports of the old master and the new one.
   */
  failOver(key: string): Promise<{ from: number; to: number }>;
  stop(): Promise<void>;
}

export async function startRedisCluster(masters = 3, replicasPerMaster = 0): Promise<PrivateRedisCluster> {
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
    for (let i = 0; i < masters * (1 + replicasPerMaster); i++) {
      const [port, busPort] = [await freePort(), await freePort()];
      ports.push(port);
      // prettier-ignore
      servers.push(Bun.spawn(["redis-server", "--port", String(port), "--cluster-port", String(busPort), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
        "--cluster-config-file", join(dir, `nodes-${port}.conf`), "--save", "", "--appendonly", "no", "--dir", dir], { stdout: "ignore", stderr: "ignore" }));
    }
    for (const port of ports) await eventually(() => ping(port), (ok) => ok, 10_000, `redis-server on ${port}`);
    // prettier-ignore
    const create = Bun.spawnSync(["redis-cli", "--cluster", "create", ...ports.map((p) => `127.0.0.1:${p}`), "--cluster-replicas", String(replicasPerMaster), "--cluster-yes"], { stdout: "pipe", stderr: "pipe" });
    if (create.exitCode !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stderr.toString()}${create.stdout.toString()}`);
    for (const port of ports) await eventually(async () => cli(port, "cluster", "info"), (info) => info.includes("cluster_state:ok"), 20_000, `the cluster's state ok on ${port}`);
    if (replicasPerMaster > 0) await eventually(async () => nodesSeenBy(ports[0]!), (nodes) => nodes.filter((n) => n.replicaOf && n.linked).length === masters * replicasPerMaster, 20_000, "every replica linked to its master");
  } catch (error) {
    kill();
    forget();
    throw error;
  }
  return {
    ports,
    url: `redis+cluster://127.0.0.1:${ports[0]}`,
    connect(options = {}) {
      const client = new Cluster(ports.map((port) => ({ host: "127.0.0.1", port })), { ...options, redisOptions: { maxRetriesPerRequest: null } });
      clients.push(client);
      return client;
    },
    async failOver(key) {
      const slot = Number(cli(ports[0]!, "cluster", "keyslot", key));
      const nodes = nodesSeenBy(ports[0]!);
      const master = nodes.find((n) => !n.replicaOf && n.slots.some(([from, to]) => slot >= from && slot <= to))!;
      const replica = nodes.find((n) => n.replicaOf === master.id);
      if (!replica) throw new Error(`the master on ${master.port} has no replica`);
      const reply = cli(replica.port, "cluster", "failover");
      if (reply !== "OK") throw new Error(`CLUSTER FAILOVER on ${replica.port}: ${reply}`);
      for (const port of ports) {
        await eventually(async () => nodesSeenBy(port).find((n) => n.id === replica.id)?.replicaOf, (of) => of === undefined, 20_000, `node ${port} to see ${replica.port} as master`);
      }
      return { from: master.port, to: replica.port };
    },
    async stop() {
      for (const client of clients) client.disconnect();
      kill();
      forget();
    },
  };
}

async function ping(port: number): Promise<boolean> {
  return cli(port, "ping") === "PONG";
}

const cli = (port: number, ...args: string[]) => Bun.spawnSync(["redis-cli", "-p", String(port), ...args]).stdout.toString().trim();

interface ClusterNode {
  id: string;
  port: number;
  /** The master's id, for a replica. */
  replicaOf?: string;
  /** Whether the node's link to the cluster is up. */
  linked: boolean;
  slots: [number, number][];
}

/** CLUSTER NODES as one node sees it. */
function nodesSeenBy(port: number): ClusterNode[] {
  return cli(port, "cluster", "nodes")
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [id, address, flags, master, , , , link, ...slots] = line.split(" ");
      return {
        id: id!,
        port: Number(address!.split("@")[0]!.split(":")[1]),
        replicaOf: flags!.includes("slave") && master !== "-" ? master : undefined,
        linked: link === "connected",
        slots: slots.filter((s) => /^\d/.test(s)).map((s) => (s.includes("-") ? (s.split("-").map(Number) as [number, number]) : [Number(s), Number(s)])),
      };
    });
}
