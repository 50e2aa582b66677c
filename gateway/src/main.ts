// Gateway process: the public HTTP API on PORT.
import { failOnConfigError } from "../../services/kit/src/config.ts";
import { createLogger } from "../../services/kit/src/logger.ts";
import { connectRedis } from "../../services/kit/src/redis.ts";
import { onShutdown } from "../../services/kit/src/server.ts";
import { buildApp } from "./app.ts";
import { loadGatewayConfig } from "./config.ts";
import { connectServices } from "./services.ts";

const logger = createLogger("gateway");
const config = failOnConfigError(() => loadGatewayConfig());
// Commands issued in the same tick by concurrent requests go out in one write.
const redis = connectRedis(config.redisUrl, { enableAutoPipelining: true });
redis.on("error", (error) => logger.error("redis error", { error: error.message }));
const subscriber = redis.duplicate({ enableAutoPipelining: false });
subscriber.on("error", (error) => logger.error("redis error", { error: error.message, connection: "subscriber" }));

const app = buildApp({ clients: connectServices(config), redis, subscriber, redisPrefix: config.redisPrefix, logger });
app.listen({ port: config.port, hostname: "0.0.0.0" });
logger.info("gateway listening", { port: app.server?.port });

onShutdown(logger, async () => {
  await app.stop();
  redis.disconnect();
  subscriber.disconnect();
});
