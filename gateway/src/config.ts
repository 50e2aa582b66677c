// Gateway configuration from the environment, validated at start.
import { loadIdentitySettings, type IdentitySettings } from "../../services/kit/src/workload-identity.ts";
import { REDIS_URL_SCHEMES } from "../../services/kit/src/redis.ts";
import { loadActingWorkloads, type ActingWorkloads } from "./grpc/acting-workloads.ts";
import { envPort, envString, envUrl, ConfigError, GRPC_PORT_OFFSET, loadServiceUrls, metricsPort, type ServiceUrls } from "../../services/kit/src/config.ts";

export interface GatewayConfig {
  port: number;
  /** Metrics and the queue dashboard (METRICS_PORT, by default PORT + 1; 0: off). */
  metricsPort: number;
  /** The public API over gRPC, articles.api.v1 (GRPC_PORT, by default PORT + 100; 0: any free port). */
  grpcPort: number;
  redisUrl: string;
  redisPrefix: string;
  /** How the gateway proves who it is to the services and checks workloads' tokens. */
  identity: IdentitySettings;
  /** Workloads that may act for an account on the public gRPC API without an API key (PUBLIC_GRPC_WORKLOADS). */
  actingWorkloads: ActingWorkloads;
  services: ServiceUrls;
}

export function loadGatewayConfig(env: Record<string, string | undefined> = process.env): GatewayConfig {
  const redisPrefix = envString(env, "REDIS_PREFIX", "articles");
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(redisPrefix)) throw new ConfigError("REDIS_PREFIX", "use 1 to 64 letters, digits, dots, dashes or underscores");
  const port = envPort(env, "PORT", 8080);
  const grpcPort = envPort(env, "GRPC_PORT", port === 0 ? 0 : port + GRPC_PORT_OFFSET);
  if (port !== 0 && grpcPort === port) throw new ConfigError("GRPC_PORT", `must differ from PORT ${port}`);
  return {
    port,
    grpcPort,
    metricsPort: metricsPort(env, port === 0 ? 0 : port + 1, [port, grpcPort]),
    redisUrl: envUrl(env, "REDIS_URL", "redis://127.0.0.1:6379", REDIS_URL_SCHEMES),
    redisPrefix,
    identity: loadIdentitySettings(env),
    actingWorkloads: loadActingWorkloads(env),
    services: loadServiceUrls(env),
  };
}
