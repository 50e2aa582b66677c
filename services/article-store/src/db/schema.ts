// Tables of the article-store context, in its own Postgres schema.
import { pgSchema } from "drizzle-orm/pg-core";

export const articleStoreSchema = pgSchema("article_store");
