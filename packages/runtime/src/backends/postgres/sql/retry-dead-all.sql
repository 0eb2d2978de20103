-- Requeues every dead letter of the queue with attempts reset; wakes workers.
-- params: $1 queue, $2 notification channel
-- result: one row { id } per job requeued
-- index:  jfast_jobs_dead_idx
WITH retried AS (
  UPDATE jfast_jobs
  SET state = 'ready', attempts = 0, available_at = now(), died_at = NULL
  WHERE queue = $1 AND phase = 'dead'
  RETURNING id
)
SELECT id, (SELECT pg_notify($2, '')) AS notified FROM retried
