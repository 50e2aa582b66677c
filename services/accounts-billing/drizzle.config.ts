import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "postgresql",
  schema: "./services/accounts-billing/src/db/schema.ts",
  out: "./services/accounts-billing/src/db/migrations",
  schemaFilter: ["accounts_billing"],
});
