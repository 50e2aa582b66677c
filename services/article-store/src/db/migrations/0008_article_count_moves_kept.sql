-- Custom SQL migration file, put your code below! --
-- Cheaper count changes (see 0003 for the design). A status change appends one row (the status
-- moved to, with moved_from) instead of one row per status, the triggers insert their rows
-- themselves instead of through arrays and a shared function, and a change that leaves every
-- count as it was appends nothing. Rows already recorded (moved_from null) keep their meaning,
-- so writers and the folder of other replicas may go on meanwhile.
CREATE OR REPLACE FUNCTION "article_store"."count_inserted_articles"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "article_store"."article_count_changes" (project_id, status, day, change)
    SELECT project_id, status, "article_store"."article_day"(created_at), count(*) FROM inserted GROUP BY 1, 2, 3;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "article_store"."count_deleted_articles"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO "article_store"."article_count_changes" (project_id, status, day, change)
    SELECT project_id, status, "article_store"."article_day"(created_at), -count(*) FROM deleted GROUP BY 1, 2, 3;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION "article_store"."count_moved_article"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  old_day date := "article_store"."article_day"(OLD.created_at);
  new_day date := "article_store"."article_day"(NEW.created_at);
BEGIN
  IF OLD.project_id = NEW.project_id AND old_day = new_day THEN
    -- A new created_at on the same day changes no count.
    IF OLD.status <> NEW.status THEN
      INSERT INTO "article_store"."article_count_changes" (project_id, status, day, change, moved_from)
        VALUES (NEW.project_id, NEW.status, new_day, 1, OLD.status);
    END IF;
  ELSE
    INSERT INTO "article_store"."article_count_changes" (project_id, status, day, change)
      VALUES (OLD.project_id, OLD.status, old_day, -1), (NEW.project_id, NEW.status, new_day, 1);
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- Moves up to `batch` recorded changes into the counts in one statement (so a reader adding the
-- changes still recorded to the counts sees every article exactly once). A move adds to its
-- status and takes off moved_from; statuses whose changes cancel out (an article created and
-- finished within the batch leaves queued and writing as they were) are not written. One folder
-- at a time.
CREATE OR REPLACE FUNCTION "article_store"."fold_article_count_changes"(batch integer) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  folded integer;
BEGIN
  IF NOT pg_try_advisory_xact_lock(hashtext('article_store.fold_article_count_changes')) THEN
    RETURN 0;
  END IF;
  WITH taken AS (
    DELETE FROM "article_store"."article_count_changes"
    WHERE id IN (SELECT id FROM "article_store"."article_count_changes" ORDER BY id LIMIT batch)
    RETURNING project_id, status, day, change, moved_from
  ), per_day AS (
    SELECT project_id, status, day, sum(change)::bigint AS change FROM (
      SELECT project_id, status, day, change FROM taken
      UNION ALL
      SELECT project_id, moved_from, day, -change FROM taken WHERE moved_from IS NOT NULL
    ) AS each_status
    GROUP BY project_id, status, day
    HAVING sum(change) <> 0
  ), counts AS (
    INSERT INTO "article_store"."article_counts" AS c (project_id, status, articles)
      SELECT project_id, status, sum(change)::bigint FROM per_day GROUP BY project_id, status HAVING sum(change) <> 0
      ON CONFLICT (project_id, status) DO UPDATE SET articles = c.articles + excluded.articles
  ), day_counts AS (
    INSERT INTO "article_store"."article_day_counts" AS c (project_id, status, day, articles)
      SELECT project_id, status, day, change FROM per_day
      ON CONFLICT (project_id, status, day) DO UPDATE SET articles = c.articles + excluded.articles
  )
  SELECT count(*) INTO folded FROM taken;
  RETURN folded;
END
$$;
--> statement-breakpoint
-- No caller is left.
DROP FUNCTION "article_store"."record_article_count_changes"(bigint[], text[], date[], bigint[]);
