ALTER TABLE "accounts_billing"."plans" ADD COLUMN "steps_per_workflow" integer;--> statement-breakpoint
ALTER TABLE "accounts_billing"."plans" ADD COLUMN "prompt_characters" integer;--> statement-breakpoint
ALTER TABLE "accounts_billing"."plans" ADD COLUMN "workflows_per_project" integer;--> statement-breakpoint
ALTER TABLE "accounts_billing"."plans" ADD COLUMN "destinations_per_project" integer;--> statement-breakpoint
ALTER TABLE "accounts_billing"."plans" ADD COLUMN "open_event_streams" integer;