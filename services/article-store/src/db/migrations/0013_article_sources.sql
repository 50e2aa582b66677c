-- The pages an article's research read, as its current version cites them, and the citations of
-- unknown numbers removed from that version. Constant defaults: Postgres adds the columns without
-- rewriting the table, and every article so far reads as having no sources.
ALTER TABLE "article_store"."articles" ADD COLUMN "sources" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "article_store"."articles" ADD COLUMN "citations_removed" integer DEFAULT 0 NOT NULL;
