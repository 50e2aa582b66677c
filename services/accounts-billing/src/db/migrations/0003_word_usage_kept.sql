-- Custom SQL migration file, put your code below! --
-- Words taken per account and month, kept instead of summed. reserve_words summed the month's
-- reservations of the account on every call, under the account's lock: a cost that grew with every
-- article the account created in the month (about 15 ms at 100,000), paid by each creation in turn.
-- Every insert, update and delete of word_reservations now records its usage change in the same
-- transaction, by a trigger, so no code path (nor an operator's SQL) can leave usage wrong; a read
-- adds the changes not yet folded to the folded usage, in one snapshot, so it is exact.
-- Writers of other replicas wait until the usage of the rows already there is stored.
LOCK TABLE "accounts_billing"."word_reservations" IN SHARE ROW EXCLUSIVE MODE;
--> statement-breakpoint
CREATE FUNCTION "accounts_billing"."record_word_usage_change"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  old_settled bigint := 0;
  old_reserved bigint := 0;
  new_settled bigint := 0;
  new_reserved bigint := 0;
BEGIN
  IF TG_OP <> 'INSERT' THEN
    old_settled := CASE WHEN OLD.state = 'settled' THEN OLD.words ELSE 0 END;
    old_reserved := CASE WHEN OLD.state = 'reserved' THEN OLD.words ELSE 0 END;
  END IF;
  IF TG_OP <> 'DELETE' THEN
    new_settled := CASE WHEN NEW.state = 'settled' THEN NEW.words ELSE 0 END;
    new_reserved := CASE WHEN NEW.state = 'reserved' THEN NEW.words ELSE 0 END;
  END IF;
  IF TG_OP = 'UPDATE' AND OLD.account_id = NEW.account_id AND OLD.period = NEW.period THEN
    -- The usual move (reserved to settled or released): one change.
    IF new_settled <> old_settled OR new_reserved <> old_reserved THEN
      INSERT INTO "accounts_billing"."word_usage_changes" (account_id, period, settled_change, reserved_change)
        VALUES (NEW.account_id, NEW.period, new_settled - old_settled, new_reserved - old_reserved);
    END IF;
    RETURN NULL;
  END IF;
  IF TG_OP <> 'INSERT' AND (old_settled <> 0 OR old_reserved <> 0) THEN
    INSERT INTO "accounts_billing"."word_usage_changes" (account_id, period, settled_change, reserved_change)
      VALUES (OLD.account_id, OLD.period, -old_settled, -old_reserved);
  END IF;
  IF TG_OP <> 'DELETE' AND (new_settled <> 0 OR new_reserved <> 0) THEN
    INSERT INTO "accounts_billing"."word_usage_changes" (account_id, period, settled_change, reserved_change)
      VALUES (NEW.account_id, NEW.period, new_settled, new_reserved);
  END IF;
  RETURN NULL;
END
$$;
--> statement-breakpoint
CREATE FUNCTION "accounts_billing"."forget_word_usage"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  TRUNCATE "accounts_billing"."word_usage", "accounts_billing"."word_usage_changes";
  RETURN NULL;
END
$$;
--> statement-breakpoint
-- The account's words taken in the period: the folded usage plus the changes not yet folded. A
-- STABLE SQL function runs in its caller's snapshot, so a fold committing meanwhile is seen whole
-- or not at all.
CREATE FUNCTION "accounts_billing"."words_taken"(p_account_id bigint, p_period text, OUT settled_words bigint, OUT reserved_words bigint)
  LANGUAGE sql STABLE AS $$
  SELECT coalesce(u.settled_words, 0) + coalesce(c.settled, 0), coalesce(u.reserved_words, 0) + coalesce(c.reserved, 0)
  FROM (SELECT sum(settled_change)::bigint AS settled, sum(reserved_change)::bigint AS reserved
        FROM "accounts_billing"."word_usage_changes" WHERE account_id = p_account_id AND period = p_period) AS c
  LEFT JOIN "accounts_billing"."word_usage" u ON u.account_id = p_account_id AND u.period = p_period
$$;
--> statement-breakpoint
-- Moves up to about `batch` recorded changes (the oldest ids) into the usage, in one transaction,
-- so a reader adding the changes still recorded to the usage counts every reservation exactly
-- once. One folder at a time. The changes are taken by a range of ids rather than `id IN (the
-- oldest batch)`: the plan cached for this function may date from a nearly empty table, and with
-- a large backlog (a million rows written at once) a semi-join planned for a few rows took minutes
-- per batch, where a range costs at most one pass over the table. A change still uncommitted
-- inside the range is not seen, so not taken: it stays for a later fold.
CREATE FUNCTION "accounts_billing"."fold_word_usage_changes"(batch integer) RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  folded integer;
  last_id bigint;
BEGIN
  IF NOT pg_try_advisory_xact_lock(hashtext('accounts_billing.fold_word_usage_changes')) THEN
    RETURN 0;
  END IF;
  SELECT max(id) INTO last_id FROM (SELECT id FROM "accounts_billing"."word_usage_changes" ORDER BY id LIMIT batch) AS oldest;
  IF last_id IS NULL THEN
    RETURN 0;
  END IF;
  WITH taken AS (
    DELETE FROM "accounts_billing"."word_usage_changes" WHERE id <= last_id
    RETURNING account_id, period, settled_change, reserved_change
  ), summed AS (
    SELECT account_id, period, sum(settled_change)::bigint AS settled, sum(reserved_change)::bigint AS reserved, count(*) AS changes
    FROM taken GROUP BY account_id, period
  ), kept AS (
    INSERT INTO "accounts_billing"."word_usage" AS u (account_id, period, settled_words, reserved_words)
      SELECT account_id, period, settled, reserved FROM summed
      ON CONFLICT (account_id, period) DO UPDATE
        SET settled_words = u.settled_words + excluded.settled_words, reserved_words = u.reserved_words + excluded.reserved_words
  )
  SELECT coalesce(sum(changes), 0) INTO folded FROM summed;
  RETURN folded;
END
$$;
--> statement-breakpoint
INSERT INTO "accounts_billing"."word_usage" (account_id, period, settled_words, reserved_words)
  SELECT account_id, period,
         coalesce(sum(words) FILTER (WHERE state = 'settled'), 0),
         coalesce(sum(words) FILTER (WHERE state = 'reserved'), 0)
  FROM "accounts_billing"."word_reservations" GROUP BY account_id, period;
--> statement-breakpoint
-- Per row and only when a counted column changes.
CREATE TRIGGER "word_reservations_counted" AFTER INSERT OR DELETE OR UPDATE OF account_id, period, words, state ON "accounts_billing"."word_reservations"
  FOR EACH ROW EXECUTE FUNCTION "accounts_billing"."record_word_usage_change"();
--> statement-breakpoint
CREATE TRIGGER "word_reservations_counted_on_truncate" AFTER TRUNCATE ON "accounts_billing"."word_reservations"
  FOR EACH STATEMENT EXECUTE FUNCTION "accounts_billing"."forget_word_usage"();
--> statement-breakpoint
-- As in migration 0001, with the words taken read from the usage kept.
CREATE OR REPLACE FUNCTION "accounts_billing"."reserve_words"(p_account_id bigint, p_reference text, p_words bigint, p_period text, p_now timestamptz)
RETURNS TABLE (
  outcome text,
  remaining_words bigint,
  r_reference text,
  r_account_id bigint,
  r_period text,
  r_words bigint,
  r_state text,
  r_created_at timestamptz,
  r_updated_at timestamptz
)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  held "accounts_billing"."word_reservations";
  usage_period text := p_period;
  monthly bigint;
  taken bigint;
  remaining bigint;
BEGIN
  -- Serialises reservations of one account: two creations can never both pass when only one fits.
  PERFORM 1 FROM "accounts_billing"."accounts" a WHERE a.id = p_account_id FOR UPDATE;
  IF NOT FOUND THEN
    RETURN QUERY SELECT 'no_account'::text, NULL::bigint, NULL::text, NULL::bigint, NULL::text, NULL::bigint, NULL::text, NULL::timestamptz, NULL::timestamptz;
    RETURN;
  END IF;

  SELECT * INTO held FROM "accounts_billing"."word_reservations" w WHERE w.reference = p_reference;
  -- A held or settled reservation is returned as it is; a released one is taken again (a retried
  -- creation after a failed one).
  IF FOUND AND held.state <> 'released' THEN usage_period := held.period; END IF;

  SELECT coalesce((
    SELECT p.monthly_words FROM "accounts_billing"."subscriptions" s JOIN "accounts_billing"."plans" p ON p.id = s.plan_id
    WHERE s.account_id = p_account_id AND s.ended_at IS NULL
  ), 0) INTO monthly;
  -- Read once the lock is held, in a snapshot of its own (see migration 0001).
  SELECT t.settled_words + t.reserved_words INTO taken FROM "accounts_billing"."words_taken"(p_account_id, usage_period) t;
  remaining := greatest(0, monthly - taken);

  IF held.reference IS NOT NULL AND held.state <> 'released' THEN
    RETURN QUERY SELECT 'existing'::text, remaining, held.reference, held.account_id, held.period, held.words, held.state, held.created_at, held.updated_at;
    RETURN;
  END IF;
  IF p_words > remaining THEN
    RETURN QUERY SELECT 'refused'::text, remaining, NULL::text, NULL::bigint, NULL::text, NULL::bigint, NULL::text, NULL::timestamptz, NULL::timestamptz;
    RETURN;
  END IF;

  IF held.reference IS NOT NULL THEN
    UPDATE "accounts_billing"."word_reservations" w
      SET account_id = p_account_id, period = p_period, words = p_words, state = 'reserved', updated_at = p_now
      WHERE w.reference = p_reference
      RETURNING w.* INTO held;
  ELSE
    INSERT INTO "accounts_billing"."word_reservations" AS w (reference, account_id, period, words, state)
      VALUES (p_reference, p_account_id, p_period, p_words, 'reserved')
      RETURNING w.* INTO held;
  END IF;
  RETURN QUERY SELECT 'reserved'::text, remaining - p_words, held.reference, held.account_id, held.period, held.words, held.state, held.created_at, held.updated_at;
END
$$;
