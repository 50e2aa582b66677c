CREATE TABLE "article_store"."endpoint_event_backlog" (
	"event_id" text PRIMARY KEY NOT NULL,
	"event" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT date_trunc('milliseconds', now()) NOT NULL
);
