import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "postgresql",
  schema: "./services/article-store/src/db/schema.ts",
  out: "./services/article-store/src/db/migrations",
  schemaFilter: ["article_store"],
});
