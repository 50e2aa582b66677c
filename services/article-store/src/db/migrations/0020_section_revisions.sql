CREATE TABLE "article_store"."section_revisions" (
	"article_id" bigint NOT NULL,
	"number" integer NOT NULL,
	"reference" text NOT NULL,
	"status" text DEFAULT 'queued' NOT NULL,
	"action" text NOT NULL,
	"section_index" integer NOT NULL,
	"section_heading" text NOT NULL,
	"instruction" text,
	"target_words" integer,
	"language" text,
	"reserved_words" integer NOT NULL,
	"key_id" bigint,
	"idempotency_key" text,
	"request_hash" text,
	"version_id" bigint,
	"written_words" integer,
	"failure_reason" text,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', now()) NOT NULL,
	"finished_at" timestamp with time zone,
	CONSTRAINT "section_revisions_article_id_number_pk" PRIMARY KEY("article_id","number"),
	CONSTRAINT "section_revisions_reference_unique" UNIQUE("reference")
);
--> statement-breakpoint
ALTER TABLE "article_store"."article_versions" ADD COLUMN "revision" jsonb;--> statement-breakpoint
ALTER TABLE "article_store"."section_revisions" ADD CONSTRAINT "section_revisions_article_id_articles_id_fk" FOREIGN KEY ("article_id") REFERENCES "article_store"."articles"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "section_revisions_one_pending" ON "article_store"."section_revisions" USING btree ("article_id") WHERE "article_store"."section_revisions"."status" in ('queued', 'running');--> statement-breakpoint
CREATE UNIQUE INDEX "section_revisions_idempotency_key" ON "article_store"."section_revisions" USING btree ("article_id","idempotency_key");