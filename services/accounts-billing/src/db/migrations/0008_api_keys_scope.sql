ALTER TABLE "accounts_billing"."api_keys" ADD COLUMN "scope_account_only" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "accounts_billing"."api_keys" ADD COLUMN "scope_project_ids" bigint[];--> statement-breakpoint
ALTER TABLE "accounts_billing"."api_keys" ADD COLUMN "scope_read_only" boolean DEFAULT false NOT NULL;