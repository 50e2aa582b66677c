-- Custom SQL migration file, put your code below! --
-- Folding takes the oldest recorded changes by a range of ids instead of `id IN (the oldest
-- batch)`: the plan this function caches may date from a nearly empty table, and with a large
-- backlog such a semi-join planned for a few rows compares every row with every id of the batch
-- (on accounts-billing's word usage, the same statement took more than five minutes for one batch
-- over 100,000 rows). A range costs at most one pass over the table. A change still uncommitted
-- inside the range is not seen, so not taken: it stays for a later fold. Otherwise as in 0008.
CREATE OR REPLACE FUNCTION "article_store"."fold_article_count_changes"(batch integer) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  folded integer;
  last_id bigint;
BEGIN
  IF NOT pg_try_advisory_xact_lock(hashtext('article_store.fold_article_count_changes')) THEN
    RETURN 0;
  END IF;
  SELECT max(id) INTO last_id FROM (SELECT id FROM "article_store"."article_count_changes" ORDER BY id LIMIT batch) AS oldest;
  IF last_id IS NULL THEN
    RETURN 0;
  END IF;
  WITH taken AS (
    DELETE FROM "article_store"."article_count_changes" WHERE id <= last_id
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
