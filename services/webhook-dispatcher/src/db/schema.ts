// Tables of the webhook-dispatcher context, in its own Postgres schema.
import { pgSchema } from "drizzle-orm/pg-core";

export const webhookDispatcherSchema = pgSchema("webhook_dispatcher");
