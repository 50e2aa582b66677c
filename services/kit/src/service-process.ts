// The common life of a service process: validated config, its own database schema migrated,
// the gRPC server up, optional background work, health that follows its Postgres (and Redis),
// and a graceful drain on SIGTERM.
import type { ConnectRouter, Interceptor } from "@connectrpc/connect";
import { ConfigError, envString, failOnConfigError, listenPorts, loadDataStores, loadPlatformConfig, metricsPort, METRICS_PORT_OFFSET, type PlatformConfig, type ServiceUrls } from "./config.ts";
import { openServiceDatabase, type MigrationMode, type ServiceDatabase } from "./db.ts";
import { postgresDependency, redisDependency, watchDependencies } from "./dependency-watch.ts";
import { createLogger, type Logger } from "./logger.ts";
import { onShutdown, startServiceServer, type ServiceServer } from "./server.ts";
import { refuseUnstorableText } from "./rules/storable-text.ts";
import { isPortInUse, portInUseMessage } from "./port-in-use.ts";
import { initMetrics, startMetricsServer, type MetricsServer } from "./metrics.ts";
import { collectGarbageWhenQuiet } from "./quiet-collection.ts";
import { flushTracing, initTracing } from "./tracing.ts";
import { loadCallerGrants, type ServiceAccess } from "./access-policy.ts";
import { loadListenerTls, trustServiceCa } from "./tls.ts";
import { accessLogSample } from "./call-log.ts";
import { CallerVerifier, OwnToken, type Credential } from "./workload-identity.ts";

export interface ServiceContext<S extends Record<string, unknown>> {
  config: PlatformConfig;
  /** This process's identity token, attached to its calls to the other services. */
  credential: Credential;
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
  /** Its background work needs Redis: health is NOT_SERVING while Redis does not answer. */
  usesRedis?: boolean;
  routes(ctx: ServiceContext<S>): (router: ConnectRouter) => void;
  /** Who may call each method it serves (access-policy.ts): declared beside the routes. */
  access: ServiceAccess[];
  /** Interceptors of the service's own, closest to its handlers. */
  interceptors?(ctx: ServiceContext<S>): Interceptor[];
  /** Background work (queue workers, relays); returns its own stop function. */
  background?(ctx: ServiceContext<S>): Promise<() => Promise<void>>;
}

/** MIGRATIONS: `apply` (default) or `verify` (see MigrationMode). */
function migrationMode(env: Record<string, string | undefined> = process.env): MigrationMode {
  const value = envString(env, "MIGRATIONS", "apply");
  if (value !== "apply" && value !== "verify") throw new ConfigError("MIGRATIONS", `expected apply or verify, got "${value}"`);
  return value;
}

/** Applies the service's migrations (one replica at a time: they take a lock) and exits; only DATABASE_URL is needed. */
async function migrateAndExit<S extends Record<string, unknown>>(def: ServiceDefinition<S>, logger: Logger): Promise<never> {
  const { databaseUrl } = failOnConfigError(() => loadDataStores());
  try {
    const database = await openServiceDatabase({ databaseUrl, schemaName: def.schemaName, schema: def.schema, migrationsFolder: def.migrationsFolder, poolSize: 1, migrations: "apply" });
    await database.close();
  } catch (error) {
    console.error(`${def.name}: migrations failed: ${(error as Error).message.split("\n")[0]}`);
    process.exit(1);
  }
  logger.info("schema migrated", { schema: def.schemaName });
  process.exit(0);
}

export async function runService<S extends Record<string, unknown>>(def: ServiceDefinition<S>): Promise<void> {
  // Before anything makes a client or a server: they install the trace interceptors only when it is on.
  await initTracing(def.name);
  initMetrics(def.name);
  const logger = failOnConfigError(() => createLogger(def.name));
  // `<service> --migrate`: the release's migration Job applies this service's migrations and exits.
  if (process.argv.includes("--migrate")) return migrateAndExit(def, logger);
  const migrations = failOnConfigError(() => migrationMode());
  const config = failOnConfigError(() => loadPlatformConfig());
  const ports = failOnConfigError(() => listenPorts(process.env, config.services[def.urlKey]));
  const credential = failOnConfigError(() => new OwnToken(config.identity.tokenFile));
  const grants = failOnConfigError(() => loadCallerGrants(process.env));
  const tls = failOnConfigError(() => loadListenerTls());
  const accessLogShare = failOnConfigError(() => accessLogSample());
  failOnConfigError(() => trustServiceCa());
  const ownMetricsPort = failOnConfigError(() => metricsPort(process.env, ports.port === 0 ? 0 : ports.port + METRICS_PORT_OFFSET, [ports.port, ports.grpcPort]));
  let database: ServiceDatabase<S>;
  try {
    database = await openServiceDatabase({
      databaseUrl: config.databaseUrl,
      schemaName: def.schemaName,
      schema: def.schema,
      migrationsFolder: def.migrationsFolder,
      poolSize: config.databasePoolSize,
      migrations,
    });
  } catch (error) {
    // drizzle's "Failed query: …" says what was sent; its cause says why it failed (e.g. too many clients).
    const cause = (error as Error).cause instanceof Error ? `: ${((error as Error).cause as Error).message}` : "";
    console.error(`${def.name}: ${(error as Error).message.split("\n")[0]}${cause}`);
    process.exit(1);
  }
  const ctx = { config, credential, database, logger };
  // Text Postgres cannot store is refused before any handler of any service reads it.
  const interceptors = [refuseUnstorableText(), ...(def.interceptors?.(ctx) ?? [])];
  let server: ServiceServer;
  try {
    server = await startServiceServer({ name: def.name, ...ports, verifier: new CallerVerifier(config.identity, logger), access: def.access, grants, logger, routes: def.routes(ctx), interceptors, tls, accessLogSample: accessLogShare, metrics: ownMetricsPort !== 0 });
  } catch (error) {
    if (!isPortInUse(error)) throw error;
    console.error(`${def.name}: ${portInUseMessage(error, [ports.port, ports.grpcPort])}`);
    process.exit(1);
  }
  let metrics: MetricsServer | undefined;
  try {
    metrics = startMetricsServer({ port: ownMetricsPort, logger });
  } catch (error) {
    if (!isPortInUse(error)) throw error;
    console.error(`${def.name}: METRICS_PORT: ${portInUseMessage(error, [ownMetricsPort])}`);
    process.exit(1);
  }
  const stopBackground = def.background ? await def.background(ctx) : async () => {};
  collectGarbageWhenQuiet();
  const dependencies = [postgresDependency(config.databaseUrl), ...(def.usesRedis ? [redisDependency(config.redisUrl)] : [])];
  const watch = watchDependencies({ dependencies, logger, onChange: (reachable) => server.setServing(reachable) });
  onShutdown(
    logger,
    async () => {
      await server.drain();
      await watch.stop();
      await stopBackground();
      await database.close();
      await metrics?.stop();
      await flushTracing();
    },
    () => server.stopServing(),
  );
}
