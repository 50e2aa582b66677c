-- The brief checks of an article's current version. Nullable without a default: Postgres adds the
-- column without rewriting the table, and every article finished before the checks reads as unmeasured.
ALTER TABLE "article_store"."articles" ADD COLUMN "quality" jsonb;
