// Watches what a process cannot serve without (its Postgres, its Redis, the services it calls):
// each is pinged about once a second on a connection of the watch's own, and the process's
// health follows, so an orchestrator stops routing to it while one is away and routes to it
// again as soon as all answer. It never exits the process: the process waits for them.
import postgres from "postgres";
import { Health, HealthCheckResponse_ServingStatus as Serving } from "../../../proto/gen/grpc/health/v1/health_pb.ts";
import type { Logger } from "./logger.ts";
import { serviceClient } from "./clients.ts";
import type { Credential } from "./workload-identity.ts";
import { connectRedis } from "./redis.ts";
import { within } from "./deadline.ts";

export interface Dependency {
  /** How logs and health answers name it: "postgres", "redis", "article-store", … */
  name: string;
  /** Resolves when the dependency answers; rejects (or outlasts the timeout) when it does not. */
  ping(): Promise<unknown>;
  close?(): Promise<void> | void;
}

export interface DependencyWatch {
  /** The dependencies that did not answer the last ping (empty once all answer). */
  unreachable(): string[];
  stop(): Promise<void>;
}

export interface DependencyWatchOptions {
  dependencies: Dependency[];
  logger: Logger;
  /** Called whenever the set of unreachable dependencies empties or stops being empty. */
  onChange(reachable: boolean): void;
  everyMs?: number;
  timeoutMs?: number;
}

export function watchDependencies(opts: DependencyWatchOptions): DependencyWatch {
  const everyMs = opts.everyMs ?? 1000;
  const timeoutMs = opts.timeoutMs ?? 2000;
  let down = new Map<string, string>();
  let reachable = true;
  let stopped = false;
  let wakeUp: (() => void) | undefined;

  async function pass(): Promise<void> {
    const results = await Promise.all(
      opts.dependencies.map((d) =>
        within(Promise.resolve().then(() => d.ping()), timeoutMs).then(
          () => [d.name, undefined] as const,
          (error) => [d.name, (error as Error).message ?? String(error)] as const,
        ),
      ),
    );
    const now = new Map<string, string>();
    for (const [name, problem] of results) if (problem !== undefined) now.set(name, problem);
    for (const [name, problem] of now) if (!down.has(name)) opts.logger.warn("dependency unreachable", { dependency: name, error: problem });
    for (const name of down.keys()) if (!now.has(name)) opts.logger.info("dependency reachable again", { dependency: name });
    down = now;
    if (reachable !== (now.size === 0)) {
      reachable = now.size === 0;
      opts.logger.info(reachable ? "serving again" : "not serving until its dependencies answer", { unreachable: [...now.keys()] });
      opts.onChange(reachable);
    }
  }

  const loop = (async () => {
    while (!stopped) {
      await pass().catch((error) => opts.logger.error("dependency check failed", { error: (error as Error).message }));
      if (stopped) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, everyMs);
        wakeUp = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  })();

  return {
    unreachable: () => [...down.keys()],
    async stop() {
      stopped = true;
      wakeUp?.();
      await loop;
      await Promise.all(opts.dependencies.map(async (d) => d.close?.()));
    },
  };
}

/** Postgres, on one connection of its own that reconnects at the next ping. */
export function postgresDependency(databaseUrl: string): Dependency {
  const sql = postgres(databaseUrl, { max: 1, onnotice: () => {}, connect_timeout: 2, backoff: () => 0, fetch_types: false });
  return {
    name: "postgres",
    ping: () => sql`select 1`,
    close: () => sql.end({ timeout: 1 }),
  };
}

/** Redis, on a connection of its own that refuses commands while disconnected instead of queueing them. */
export function redisDependency(redisUrl: string): Dependency {
  const redis = connectRedis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 0 });
  // Its errors are what the watch reports; the connection keeps reconnecting by itself.
  redis.on("error", () => {});
  return {
    name: "redis",
    ping: () => redis.ping(),
    close: () => redis.disconnect(),
  };
}

/** Another of the project's services, through its grpc.health.v1 check on its Connect address. */
export function serviceDependency(name: string, baseUrl: string, credential: Credential): Dependency {
  const health = serviceClient(Health, { baseUrl, credential, timeoutMs: 2000 });
  return {
    name,
    async ping() {
      const { status } = await health.check({});
      if (status !== Serving.SERVING) throw new Error(`reports ${Serving[status]}`);
    },
  };
}
