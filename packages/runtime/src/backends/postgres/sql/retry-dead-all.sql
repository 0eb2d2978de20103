-- Requeues every dead letter of the queue with attempts reset; wakes workers.
-- params: $1 queue, $2 notification channel
-- result: one row { id } per job requeued
-- index:  jfast_jobs_dead_idx
WITH retried AS (
  UPDATE jfast_jobs
  SET state = 'ready', attempts = 0, available_at = now(), died_at = NULL,
      -- A unique job that did not hold its key while dead does not take it back (another job may hold it now).
      unique_phases = CASE WHEN 'dead' = ANY (unique_phases) THEN unique_phases END,
      -- A fair task's job waits for its key's next turn, placed by the next claim (fair-place.sql).
      fair_turn = CASE WHEN fair_turn IS NOT NULL THEN 'Infinity'::double precision END
  WHERE queue = $1 AND phase = 'dead'
  RETURNING id
)
SELECT id, (SELECT pg_notify($2, '')) AS notified FROM retried
