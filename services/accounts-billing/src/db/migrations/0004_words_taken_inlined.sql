-- Custom SQL migration file, put your code below! --
-- words_taken as a set-returning SQL function (one row always: the sum's aggregate has one), so
-- Postgres inlines it into the query that calls it. Declared with OUT parameters it was called as
-- a function, and its query was planned again on every call: reserve_words, under the account's
-- lock, spent 2.5 times as long in it (0.095 against 0.038 ms a call with 300 changes not yet
-- folded).
-- Inlined, it is part of its caller's query, so it still reads in the caller's one snapshot.
-- The return type cannot be replaced in place: the function is dropped and created in this
-- migration's one transaction, so other sessions see the old one until it commits.
DROP FUNCTION "accounts_billing"."words_taken"(bigint, text);
--> statement-breakpoint
CREATE FUNCTION "accounts_billing"."words_taken"(p_account_id bigint, p_period text)
  RETURNS TABLE (settled_words bigint, reserved_words bigint)
  LANGUAGE sql STABLE AS $$
  SELECT coalesce(u.settled_words, 0) + coalesce(c.settled, 0), coalesce(u.reserved_words, 0) + coalesce(c.reserved, 0)
  FROM (SELECT sum(settled_change)::bigint AS settled, sum(reserved_change)::bigint AS reserved
        FROM "accounts_billing"."word_usage_changes" WHERE account_id = p_account_id AND period = p_period) AS c
  LEFT JOIN "accounts_billing"."word_usage" u ON u.account_id = p_account_id AND u.period = p_period
$$;
