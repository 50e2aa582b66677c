// workflow-catalog process.
import { fileURLToPath } from "node:url";
import { runService } from "../../kit/src/service-process.ts";
import * as schema from "./db/schema.ts";

await runService({
  name: "workflow-catalog",
  urlKey: "workflowCatalog",
  schemaName: "workflow_catalog",
  schema,
  migrationsFolder: fileURLToPath(new URL("./db/migrations", import.meta.url)),
  routes: () => () => {},
});
