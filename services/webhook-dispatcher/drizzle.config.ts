import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "postgresql",
  schema: "./services/webhook-dispatcher/src/db/schema.ts",
  out: "./services/webhook-dispatcher/src/db/migrations",
  schemaFilter: ["webhook_dispatcher"],
});
