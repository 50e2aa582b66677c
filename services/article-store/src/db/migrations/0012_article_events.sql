-- The event logs of ended articles, copied from their Redis streams (event-archive.ts); a new,
-- empty table, so its foreign key and index cost nothing to add.
CREATE TABLE "article_store"."article_events" (
	"article_id" bigint NOT NULL,
	"stream_ms" bigint NOT NULL,
	"stream_seq" bigint NOT NULL,
	"event" text NOT NULL,
	"data" text NOT NULL,
	CONSTRAINT "article_events_article_id_stream_ms_stream_seq_pk" PRIMARY KEY("article_id","stream_ms","stream_seq")
);
--> statement-breakpoint
ALTER TABLE "article_store"."article_events" ADD CONSTRAINT "article_events_article_id_articles_id_fk" FOREIGN KEY ("article_id") REFERENCES "article_store"."articles"("id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "article_events_age" ON "article_store"."article_events" USING btree ("stream_ms");