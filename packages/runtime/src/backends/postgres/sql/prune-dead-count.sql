-- Deletes one batch of dead letters beyond the newest $2, oldest among them first (docs/queues.md#retention:
-- keep_dead as a count). Skips rows another transaction holds.
-- params: $1 queue, $2 how many of the newest to keep, $3 batch size
-- result: one row { deleted: count }
-- index:  jfast_jobs_dead_idx (queue, died_at DESC, seq DESC), read in its order past the $2 kept ones
WITH doomed AS (
  SELECT id FROM jfast_jobs
  WHERE queue = $1 AND phase = 'dead'
  ORDER BY died_at DESC, seq DESC
  OFFSET $2
  LIMIT $3
  FOR UPDATE SKIP LOCKED
),
deleted AS (
  DELETE FROM jfast_jobs AS j USING doomed WHERE j.id = doomed.id RETURNING 1
)
SELECT count(*)::integer AS deleted FROM deleted
