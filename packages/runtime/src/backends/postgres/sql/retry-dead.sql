-- Requeues the given dead letters with attempts reset (their error history stays); wakes workers.
-- params: $1 queue, $2 job ids text[], $3 notification channel
-- result: one row { id } per job requeued; ids missing from the result were not dead letters
-- index:  jfast_jobs_pkey
WITH retried AS (
  UPDATE jfast_jobs
  SET state = 'ready', attempts = 0, available_at = now(), died_at = NULL,
      -- A unique job that did not hold its key while dead does not take it back (another job may hold it now).
      unique_phases = CASE WHEN 'dead' = ANY (unique_phases) THEN unique_phases END,
      -- A fair task's job waits for its key's next turn, placed by the next claim (fair-place.sql).
      fair_turn = CASE WHEN fair_turn IS NOT NULL THEN 'Infinity'::double precision END
  WHERE queue = $1 AND phase = 'dead' AND id = ANY($2::text[])
  RETURNING id
)
SELECT id, (SELECT pg_notify($3, '')) AS notified FROM retried
