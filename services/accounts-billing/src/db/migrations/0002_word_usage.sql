CREATE TABLE "accounts_billing"."word_usage" (
	"account_id" bigint NOT NULL,
	"period" text NOT NULL,
	"settled_words" bigint NOT NULL,
	"reserved_words" bigint NOT NULL,
	CONSTRAINT "word_usage_account_id_period_pk" PRIMARY KEY("account_id","period")
);
--> statement-breakpoint
CREATE TABLE "accounts_billing"."word_usage_changes" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"account_id" bigint NOT NULL,
	"period" text NOT NULL,
	"settled_change" bigint NOT NULL,
	"reserved_change" bigint NOT NULL
);
--> statement-breakpoint
CREATE INDEX "word_usage_changes_account_period" ON "accounts_billing"."word_usage_changes" USING btree ("account_id","period");