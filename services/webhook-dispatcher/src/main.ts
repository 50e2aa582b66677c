// webhook-dispatcher process.
import { fileURLToPath } from "node:url";
import { runService } from "../../kit/src/service-process.ts";
import * as schema from "./db/schema.ts";

await runService({
  name: "webhook-dispatcher",
  urlKey: "webhookDispatcher",
  schemaName: "webhook_dispatcher",
  schema,
  migrationsFolder: fileURLToPath(new URL("./db/migrations", import.meta.url)),
  routes: () => () => {},
});
