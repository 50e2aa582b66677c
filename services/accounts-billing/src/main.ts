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

const capDefaults = failOnConfigError(() => loadTenantCapDefaults());

await runService({
  name: "accounts-billing",
  urlKey: "accountsBilling",
  schemaName: "accounts_billing",
  schema,
  migrationsFolder: fileURLToPath(new URL("./db/migrations", import.meta.url)),
  routes: ({ database }) => {
    const core = accountsBillingRoutes(database.db, capDefaults);
    const selfService = selfServiceRoutes(database.db);
    return (router) => {
      core(router);
      selfService(router);
    };
  },
  access: accountsBillingAccess,
  async background({ database, logger }) {
    const folding = startChangeFolding({ what: "word usage", fold: () => foldWordUsageChanges(database.db), batch: WORD_USAGE_FOLD_BATCH, logger });
    return () => folding.stop();
  },
});
