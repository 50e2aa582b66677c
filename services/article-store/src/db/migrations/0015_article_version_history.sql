DROP INDEX "article_store"."article_versions_kind";--> statement-breakpoint
ALTER TABLE "article_store"."article_versions" ADD COLUMN "description" text;--> statement-breakpoint
ALTER TABLE "article_store"."article_versions" ADD COLUMN "sources" jsonb DEFAULT '[]'::jsonb NOT NULL;--> statement-breakpoint
ALTER TABLE "article_store"."article_versions" ADD COLUMN "citations_removed" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "article_store"."article_versions" ADD COLUMN "quality" jsonb;--> statement-breakpoint
ALTER TABLE "article_store"."article_versions" ADD COLUMN "made_by_key_id" bigint;--> statement-breakpoint
ALTER TABLE "article_store"."article_versions" ADD COLUMN "made_by_workload" text;--> statement-breakpoint
ALTER TABLE "article_store"."article_versions" ADD COLUMN "restored_from" integer;--> statement-breakpoint
CREATE UNIQUE INDEX "article_versions_generation_kind" ON "article_store"."article_versions" USING btree ("article_id","kind") WHERE "article_store"."article_versions"."kind" in ('generated', 'humanized');--> statement-breakpoint
-- Versions stored before history kept what the article showed with them: each takes its article's
-- description, sources and citation count (a humanized pass kept the first version's description,
-- and its sources are the article's now); the brief checks only the current version's. All were
-- made by the generation run.
UPDATE "article_store"."article_versions" v SET
  "description" = a."description",
  "sources" = a."sources",
  "citations_removed" = a."citations_removed",
  "quality" = CASE WHEN a."current_version_id" = v."id" THEN a."quality" END,
  "made_by_workload" = 'generation-runner'
FROM "article_store"."articles" a
WHERE a."id" = v."article_id";
