-- Custom SQL migration file, put your code below! --
-- A reservation in one round trip (README, Performance): the account's lock, the check against the
-- month's allowance and the hold, as one statement. A function rather than one query with CTEs:
-- each statement here reads a fresh snapshot once the account's lock is held, so a reservation
-- that committed while this one waited is counted (a single statement's snapshot would predate
-- it, and two creations could both pass when only one fits). Errors come back as an outcome, not
-- raised, so the service words them as before.
CREATE FUNCTION "accounts_billing"."reserve_words"(p_account_id bigint, p_reference text, p_words bigint, p_period text, p_now timestamptz)
RETURNS TABLE (
  outcome text,               -- 'no_account', 'refused', 'existing' (returned as it is) or 'reserved'
  remaining_words bigint,     -- after the reservation; what was left when refused
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
  SELECT coalesce(sum(w.words) FILTER (WHERE w.state IN ('settled', 'reserved')), 0) INTO taken
    FROM "accounts_billing"."word_reservations" w WHERE w.account_id = p_account_id AND w.period = usage_period;
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
