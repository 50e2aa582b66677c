// Tables of the generation-runner context, in its own Postgres schema.
import { pgSchema } from "drizzle-orm/pg-core";

export const generationRunnerSchema = pgSchema("generation_runner");
