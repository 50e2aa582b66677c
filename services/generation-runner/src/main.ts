// generation-runner process.
import { fileURLToPath } from "node:url";
import { runService } from "../../kit/src/service-process.ts";
import * as schema from "./db/schema.ts";

await runService({
  name: "generation-runner",
  urlKey: "generationRunner",
  schemaName: "generation_runner",
  schema,
  migrationsFolder: fileURLToPath(new URL("./db/migrations", import.meta.url)),
  routes: () => () => {},
});
