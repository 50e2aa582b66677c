// accounts-billing process: identity, access and the word quota ledger over gRPC.
import { fileURLToPath } from "node:url";
import { runService } from "../../kit/src/service-process.ts";
import { schema } from "./db/client.ts";
import { accountsBillingRoutes } from "./rpc.ts";
import { selfServiceRoutes } from "./self-service-rpc.ts";
import { accountsBillingAccess } from "./access.ts";
import { startChangeFolding } from "../../kit/src/change-folding.ts";
import { foldWordUsageChanges, WORD_USAGE_FOLD_BATCH } from "./domain/word-quota.ts";
import { failOnConfigError, loadTenantCapDefaults } from "../../kit/src/config.ts";
import { loadMailSettings } from "./mail-settings.ts";
import { startMailSender, type MailSender } from "./mail-sender.ts";
import { handOverQuotaAlerts, recordQuotaCrossings } from "./domain/quota-alerts.ts";
import { openQueue, type EndpointEventJob } from "../../kit/src/queues.ts";
import { connectRedis, type RedisConnection } from "../../kit/src/redis.ts";
import { handOverEndpointEvent } from "../../kit/src/endpoint-events.ts";
import { planWeightAnnouncer, type PlanWeightAnnouncer } from "./plan-weight-announcer.ts";

const capDefaults = failOnConfigError(() => loadTenantCapDefaults());
const mailSettings = failOnConfigError(() => loadMailSettings());
// Started with the background work; the handlers queue mail from the start and wake it once it runs.
let mailSender: MailSender | undefined;
// Redis carries plans' weights to the runners (plan-weight-announcer.ts) and quota.low to the
// webhook endpoints; neither is a dependency of this service's calls, so its health does not
// follow Redis.
let redis: RedisConnection | undefined;
let weights: PlanWeightAnnouncer | undefined;

await runService({
  name: "accounts-billing",
  urlKey: "accountsBilling",
  schemaName: "accounts_billing",
  schema,
  migrationsFolder: fileURLToPath(new URL("./db/migrations", import.meta.url)),
  routes: ({ database, config, logger }) => {
    redis = connectRedis(config.redisUrl);
    redis.on("error", (error) => logger.warn("redis error (plan weights are announced again at start; quota alerts wait in Postgres)", { error: error.message }));
    weights = planWeightAnnouncer(database.db, redis, config.redisPrefix, logger);
    const core = accountsBillingRoutes(database.db, capDefaults, weights);
    const selfService = selfServiceRoutes(database.db, mailSettings && { wake: () => mailSender?.wake() });
    return (router) => {
      core(router);
      selfService(router);
    };
  },
  access: accountsBillingAccess,
  async background({ database, config, logger }) {
    const folding = startChangeFolding({ what: "word usage", fold: () => foldWordUsageChanges(database.db), batch: WORD_USAGE_FOLD_BATCH, logger });
    if (mailSettings) mailSender = startMailSender(database.db, mailSettings, logger);
    // Changes made while Redis was away (or lost with it) reach the runners now.
    void weights?.everyAccount();
    // quota.low for the webhook endpoints: crossings recorded, then handed over (an outbox whose
    // rows wait in Postgres while Redis is away).
    const endpointEvents = openQueue<EndpointEventJob>("endpoint-events", redis ?? connectRedis(config.redisUrl), config.redisPrefix);
    const alerts = startChangeFolding({
      what: "quota alert",
      fold: async () => {
        await recordQuotaCrossings(database.db);
        return handOverQuotaAlerts(database.db, (event) => handOverEndpointEvent(endpointEvents, event));
      },
      batch: 500,
      everyMs: 1000,
      logger,
    });
    return async () => {
      await Promise.all([folding.stop(), alerts.stop(), mailSender?.stop()]);
      await endpointEvents.close();
      redis?.disconnect();
    };
  },
});
