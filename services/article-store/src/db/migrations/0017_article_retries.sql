CREATE TABLE "article_store"."article_failures" (
	"article_id" bigint NOT NULL,
	"attempt" integer NOT NULL,
	"reason" text,
	"step" text,
	"failed_at" timestamp with time zone NOT NULL,
	"retried_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "article_failures_article_id_attempt_pk" PRIMARY KEY("article_id","attempt")
);
--> statement-breakpoint
ALTER TABLE "article_store"."articles" ADD COLUMN "failed_step" text;--> statement-breakpoint
ALTER TABLE "article_store"."article_failures" ADD CONSTRAINT "article_failures_article_id_articles_id_fk" FOREIGN KEY ("article_id") REFERENCES "article_store"."articles"("id") ON DELETE no action ON UPDATE no action;