-- Puts dead rows back to pending, due now, with attempts reset; the error history stays (the row counts
-- as failing in /ready until it is delivered). Wakes the relays.
-- params: $1 ids text[] (null: every dead row), $2 notification channel
-- result: one row { id } per row requeued
-- index:  jfast_outbox_pkey (by ids), jfast_outbox_dead_idx (all)
WITH retried AS (
  UPDATE jfast_outbox
  SET state = 'pending', attempts = 0, available_at = now(), died_at = NULL, claimed_by = NULL
  WHERE state = 'dead' AND ($1::text[] IS NULL OR id = ANY($1::text[]))
  RETURNING id
)
SELECT id, pg_notify($2, '') AS notified FROM retried
