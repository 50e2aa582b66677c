// workflow-catalog process: built-in and custom workflows, revisions and pinned snapshots over gRPC.
import { fileURLToPath } from "node:url";
import { runService } from "../../kit/src/service-process.ts";
import { workflowCatalogAccess } from "./access.ts";
import { schema } from "./db/client.ts";
import { recordBuiltinSnapshots } from "./domain/pinned-snapshots.ts";
import { workflowCatalogRoutes } from "./rpc.ts";

await runService({
  name: "workflow-catalog",
  urlKey: "workflowCatalog",
  schemaName: "workflow_catalog",
  schema,
  migrationsFolder: fileURLToPath(new URL("./db/migrations", import.meta.url)),
  access: workflowCatalogAccess,
  routes: ({ database }) => workflowCatalogRoutes(database.db),
  // Every built-in revision this deployment pins stays readable after the code moves on.
  background: async ({ database }) => {
    await recordBuiltinSnapshots(database.db);
    return async () => {};
  },
});
