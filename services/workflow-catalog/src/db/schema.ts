// Tables of the workflow-catalog context, in its own Postgres schema.
import { pgSchema } from "drizzle-orm/pg-core";

export const workflowCatalogSchema = pgSchema("workflow_catalog");
