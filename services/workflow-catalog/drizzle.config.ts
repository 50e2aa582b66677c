import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "postgresql",
  schema: "./services/workflow-catalog/src/db/schema.ts",
  out: "./services/workflow-catalog/src/db/migrations",
  schemaFilter: ["workflow_catalog"],
});
