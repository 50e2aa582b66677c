CREATE TABLE "accounts_billing"."mail_outbox" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"kind" text NOT NULL,
	"user_id" bigint NOT NULL,
	"account_id" bigint,
	"actor_user_id" bigint,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"attempts" integer DEFAULT 0 NOT NULL,
	"next_attempt_at" timestamp with time zone DEFAULT now() NOT NULL,
	"sent_at" timestamp with time zone,
	"failed_at" timestamp with time zone,
	"last_error" text
);
--> statement-breakpoint
ALTER TABLE "accounts_billing"."memberships" ADD COLUMN "view_only_project_ids" bigint[];--> statement-breakpoint
ALTER TABLE "accounts_billing"."mail_outbox" ADD CONSTRAINT "mail_outbox_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "accounts_billing"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "accounts_billing"."mail_outbox" ADD CONSTRAINT "mail_outbox_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "accounts_billing"."accounts"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "accounts_billing"."mail_outbox" ADD CONSTRAINT "mail_outbox_actor_user_id_users_id_fk" FOREIGN KEY ("actor_user_id") REFERENCES "accounts_billing"."users"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "mail_outbox_due" ON "accounts_billing"."mail_outbox" USING btree ("next_attempt_at") WHERE "accounts_billing"."mail_outbox"."sent_at" is null and "accounts_billing"."mail_outbox"."failed_at" is null;