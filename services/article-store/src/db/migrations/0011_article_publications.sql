-- Publications of each article to its project's destinations. A constant default: Postgres adds the
-- column without rewriting the table.
ALTER TABLE "article_store"."articles" ADD COLUMN "publications" jsonb DEFAULT '[]'::jsonb NOT NULL;