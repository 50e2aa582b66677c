// Gateway configuration from the environment, validated at start.
import { envPort, envString, envUrl, envOptional, ConfigError, loadServiceUrls, metricsPort, type ServiceUrls } from "../../services/kit/src/config.ts";

export interface GatewayConfig {
  port: number;
  /** Metrics and the queue dashboard (METRICS_PORT, by default PORT + 1; 0: off). */
  metricsPort: number;
  redisUrl: string;
  redisPrefix: string;
  serviceToken: string;
  services: ServiceUrls;
}

export function loadGatewayConfig(env: Record<string, string | undefined> = process.env): GatewayConfig {
  const serviceToken = envOptional(env, "SERVICE_TOKEN");
  if (!serviceToken || serviceToken.length < 16) throw new ConfigError("SERVICE_TOKEN", "required, at least 16 characters: the shared credential of calls between services");
  const redisPrefix = envString(env, "REDIS_PREFIX", "articles");
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(redisPrefix)) throw new ConfigError("REDIS_PREFIX", "use 1 to 64 letters, digits, dots, dashes or underscores");
  const port = envPort(env, "PORT", 8080);
  return {
    port,
    metricsPort: metricsPort(env, port === 0 ? 0 : port + 1, [port]),
    redisUrl: envUrl(env, "REDIS_URL", "redis://127.0.0.1:6379", ["redis:", "rediss:"]),
    redisPrefix,
    serviceToken,
    services: loadServiceUrls(env),
  };
}
