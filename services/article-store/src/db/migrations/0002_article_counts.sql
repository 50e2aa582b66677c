CREATE TABLE "article_store"."article_count_changes" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"project_id" bigint NOT NULL,
	"status" text NOT NULL,
	"day" date NOT NULL,
	"change" bigint NOT NULL
);
--> statement-breakpoint
CREATE TABLE "article_store"."article_counts" (
	"project_id" bigint NOT NULL,
	"status" text NOT NULL,
	"articles" bigint NOT NULL,
	CONSTRAINT "article_counts_project_id_status_pk" PRIMARY KEY("project_id","status")
);
--> statement-breakpoint
CREATE TABLE "article_store"."article_day_counts" (
	"project_id" bigint NOT NULL,
	"status" text NOT NULL,
	"day" date NOT NULL,
	"articles" bigint NOT NULL,
	CONSTRAINT "article_day_counts_project_id_status_day_pk" PRIMARY KEY("project_id","status","day")
);
--> statement-breakpoint
CREATE INDEX "article_count_changes_project" ON "article_store"."article_count_changes" USING btree ("project_id","status");