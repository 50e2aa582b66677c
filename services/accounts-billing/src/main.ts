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
import { connectRedis, type RedisConnection } from "../../kit/src/redis.ts";
import { planWeightAnnouncer, type PlanWeightAnnouncer } from "./plan-weight-announcer.ts";

const capDefaults = failOnConfigError(() => loadTenantCapDefaults());
// Plans' weights are written to the runners' Redis (plan-weight-announcer.ts); nothing else of
// accounts-billing needs Redis, so its health does not follow it.
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
    weights = planWeightAnnouncer(database.db, redis, config.redisPrefix, logger);
    const core = accountsBillingRoutes(database.db, capDefaults, weights);
    const selfService = selfServiceRoutes(database.db);
    return (router) => {
      core(router);
      selfService(router);
    };
  },
  access: accountsBillingAccess,
  async background({ database, logger }) {
    const folding = startChangeFolding({ what: "word usage", fold: () => foldWordUsageChanges(database.db), batch: WORD_USAGE_FOLD_BATCH, logger });
    // Changes made while Redis was away (or lost with it) reach the runners now.
    void weights?.everyAccount();
    return async () => {
      await folding.stop();
      redis?.disconnect();
    };
  },
});
