CREATE TABLE "accounts_billing"."quota_alerts" (
	"account_id" bigint NOT NULL,
	"period" text NOT NULL,
	"threshold_percent" integer NOT NULL,
	"monthly_words" bigint NOT NULL,
	"taken_words" bigint NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"handed_over_at" timestamp with time zone,
	CONSTRAINT "quota_alerts_account_id_period_threshold_percent_pk" PRIMARY KEY("account_id","period","threshold_percent")
);
--> statement-breakpoint
CREATE INDEX "quota_alerts_waiting" ON "accounts_billing"."quota_alerts" USING btree ("created_at") WHERE "accounts_billing"."quota_alerts"."handed_over_at" is null;