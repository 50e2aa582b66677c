// article-store process.
import { fileURLToPath } from "node:url";
import { runService } from "../../kit/src/service-process.ts";
import * as schema from "./db/schema.ts";

await runService({
  name: "article-store",
  urlKey: "articleStore",
  schemaName: "article_store",
  schema,
  migrationsFolder: fileURLToPath(new URL("./db/migrations", import.meta.url)),
  routes: () => () => {},
});
