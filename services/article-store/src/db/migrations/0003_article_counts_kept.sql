-- Custom SQL migration file, put your code below! --
-- Every insert, status change and delete of articles records its count changes in the same
-- transaction, by triggers, so no code path (nor an operator's SQL) can leave the counts wrong;
-- drizzle cannot declare triggers, hence this hand-written migration.
-- Writers of other replicas wait until the counts of the rows already there are stored.
LOCK TABLE "article_store"."articles" IN SHARE ROW EXCLUSIVE MODE;
--> statement-breakpoint
CREATE FUNCTION "article_store"."article_day"(created_at timestamptz) RETURNS date
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT (created_at AT TIME ZONE 'UTC')::date $$;
--> statement-breakpoint
CREATE FUNCTION "article_store"."record_article_count_changes"(project_ids bigint[], statuses text[], days date[], changes bigint[]) RETURNS void
  LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "article_store"."article_count_changes" (project_id, status, day, change)
    SELECT d.project_id, d.status, d.day, sum(d.change)::bigint
    FROM unnest(project_ids, statuses, days, changes) AS d(project_id, status, day, change)
    GROUP BY d.project_id, d.status, d.day HAVING sum(d.change) <> 0;
END
$$;
--> statement-breakpoint
CREATE FUNCTION "article_store"."count_inserted_articles"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "article_store"."record_article_count_changes"(array_agg(project_id), array_agg(status), array_agg(day), array_agg(articles))
  FROM (SELECT project_id, status, "article_store"."article_day"(created_at) AS day, count(*) AS articles FROM inserted GROUP BY 1, 2, 3) AS g;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION "article_store"."count_deleted_articles"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "article_store"."record_article_count_changes"(array_agg(project_id), array_agg(status), array_agg(day), array_agg(-articles))
  FROM (SELECT project_id, status, "article_store"."article_day"(created_at) AS day, count(*) AS articles FROM deleted GROUP BY 1, 2, 3) AS g;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION "article_store"."count_moved_article"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM "article_store"."record_article_count_changes"(
    ARRAY[OLD.project_id, NEW.project_id],
    ARRAY[OLD.status, NEW.status],
    ARRAY["article_store"."article_day"(OLD.created_at), "article_store"."article_day"(NEW.created_at)],
    ARRAY[-1, 1]::bigint[]);
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION "article_store"."count_no_articles"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE "article_store"."article_counts", "article_store"."article_day_counts", "article_store"."article_count_changes";
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- Moves up to `batch` recorded changes into the counts, in one transaction, so a reader adding the
-- changes still recorded to the counts sees every article exactly once. One folder at a time.
CREATE FUNCTION "article_store"."fold_article_count_changes"(batch integer) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  project_ids bigint[];
  statuses text[];
  days date[];
  changes bigint[];
  folded integer;
BEGIN
  IF NOT pg_try_advisory_xact_lock(hashtext('article_store.fold_article_count_changes')) THEN
    RETURN 0;
  END IF;
  WITH taken AS (
    DELETE FROM "article_store"."article_count_changes"
    WHERE id IN (SELECT id FROM "article_store"."article_count_changes" ORDER BY id LIMIT batch)
    RETURNING project_id, status, day, change
  )
  SELECT array_agg(project_id), array_agg(status), array_agg(day), array_agg(change), count(*) INTO project_ids, statuses, days, changes, folded FROM taken;
  INSERT INTO "article_store"."article_counts" AS c (project_id, status, articles)
    SELECT d.project_id, d.status, sum(d.change)::bigint
    FROM unnest(project_ids, statuses, changes) AS d(project_id, status, change)
    GROUP BY d.project_id, d.status
    ON CONFLICT (project_id, status) DO UPDATE SET articles = c.articles + excluded.articles;
  INSERT INTO "article_store"."article_day_counts" AS c (project_id, status, day, articles)
    SELECT d.project_id, d.status, d.day, sum(d.change)::bigint
    FROM unnest(project_ids, statuses, days, changes) AS d(project_id, status, day, change)
    GROUP BY d.project_id, d.status, d.day
    ON CONFLICT (project_id, status, day) DO UPDATE SET articles = c.articles + excluded.articles;
  RETURN folded;
END
$$;
--> statement-breakpoint
INSERT INTO "article_store"."article_counts" (project_id, status, articles)
  SELECT project_id, status, count(*) FROM "article_store"."articles" GROUP BY project_id, status;
--> statement-breakpoint
INSERT INTO "article_store"."article_day_counts" (project_id, status, day, articles)
  SELECT project_id, status, "article_store"."article_day"(created_at), count(*) FROM "article_store"."articles" GROUP BY 1, 2, 3;
--> statement-breakpoint
-- Per statement with the inserted rows, so a bulk insert records each count change once.
CREATE TRIGGER "articles_counted_on_insert" AFTER INSERT ON "article_store"."articles"
  REFERENCING NEW TABLE AS inserted FOR EACH STATEMENT EXECUTE FUNCTION "article_store"."count_inserted_articles"();
--> statement-breakpoint
CREATE TRIGGER "articles_counted_on_delete" AFTER DELETE ON "article_store"."articles"
  REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT EXECUTE FUNCTION "article_store"."count_deleted_articles"();
--> statement-breakpoint
-- Per row and only when a counted column changes: progress updates that keep the status cost nothing.
CREATE TRIGGER "articles_counted_on_move" AFTER UPDATE OF project_id, status, created_at ON "article_store"."articles"
  FOR EACH ROW
  WHEN (OLD.project_id IS DISTINCT FROM NEW.project_id OR OLD.status IS DISTINCT FROM NEW.status OR OLD.created_at IS DISTINCT FROM NEW.created_at)
  EXECUTE FUNCTION "article_store"."count_moved_article"();
--> statement-breakpoint
CREATE TRIGGER "articles_counted_on_truncate" AFTER TRUNCATE ON "article_store"."articles"
  FOR EACH STATEMENT EXECUTE FUNCTION "article_store"."count_no_articles"();
