import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "postgresql",
  schema: "./services/generation-runner/src/db/schema.ts",
  out: "./services/generation-runner/src/db/migrations",
  schemaFilter: ["generation_runner"],
});
