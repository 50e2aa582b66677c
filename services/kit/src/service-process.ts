// The common life of a service process: validated config, its own database schema migrated,
// the gRPC server up, optional background work, and a graceful drain on SIGTERM.
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { failOnConfigError, listenPorts, loadPlatformConfig, type PlatformConfig, type ServiceUrls } from "./config.ts";
import { openServiceDatabase, type ServiceDatabase } from "./db.ts";
import { createLogger, type Logger } from "./logger.ts";
import { onShutdown, startServiceServer } from "./server.ts";

export interface ServiceContext<S extends Record<string, unknown>> {
  config: PlatformConfig;
  database: ServiceDatabase<S>;
  logger: Logger;
}

export interface ServiceDefinition<S extends Record<string, unknown>> {
  name: string;
  /** Which entry of ServiceUrls is this service's own address. */
  urlKey: keyof ServiceUrls;
  schemaName: string;
  schema: S;
  migrationsFolder: string;
  routes(ctx: ServiceContext<S>): (router: ConnectRouter) => void;
  /** Interceptors of the service's own, closest to its handlers. */
  interceptors?(ctx: ServiceContext<S>): Interceptor[];
  /** Background work (queue workers, relays); returns its own stop function. */
  background?(ctx: ServiceContext<S>): Promise<() => Promise<void>>;
}

export async function runService<S extends Record<string, unknown>>(def: ServiceDefinition<S>): Promise<void> {
  const logger = createLogger(def.name);
  const config = failOnConfigError(() => loadPlatformConfig());
  const ports = failOnConfigError(() => listenPorts(process.env, config.services[def.urlKey]));
  let database: ServiceDatabase<S>;
  try {
    database = await openServiceDatabase({
      databaseUrl: config.databaseUrl,
      schemaName: def.schemaName,
      schema: def.schema,
      migrationsFolder: def.migrationsFolder,
    });
  } catch (error) {
    console.error(`${def.name}: ${(error as Error).message}`);
    process.exit(1);
  }
  const ctx = { config, database, logger };
  const server = await startServiceServer({ name: def.name, ...ports, serviceToken: config.serviceToken, logger, routes: def.routes(ctx), interceptors: def.interceptors?.(ctx) });
  const stopBackground = def.background ? await def.background(ctx) : async () => {};
  onShutdown(logger, async () => {
    await server.drain();
    await stopBackground();
    await database.close();
  });
}
