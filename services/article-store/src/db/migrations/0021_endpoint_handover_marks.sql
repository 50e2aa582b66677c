CREATE TABLE "article_store"."endpoint_handover_marks" (
	"replica" text PRIMARY KEY NOT NULL,
	"covered_until" timestamp with time zone NOT NULL,
	"seen_at" timestamp with time zone DEFAULT now() NOT NULL
);
