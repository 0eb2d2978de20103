-- Deletes one batch of completed ($2 = 'completed') or cancelled ($2 = 'cancelled') jobs beyond the newest $3,
-- oldest first (docs/queues.md#retention: keep_* as a count). Skips rows another transaction holds.
-- params: $1 queue, $2 phase, $3 how many of the newest to keep, $4 batch size
-- result: one row { deleted: count }
-- index:  jfast_jobs_finished_idx (queue, phase, finished_at): read newest first past the $3 kept ones
WITH doomed AS (
  SELECT id FROM jfast_jobs
  WHERE queue = $1 AND phase = $2::text AND phase IN ('completed', 'cancelled')
  ORDER BY finished_at DESC
  OFFSET $3
  LIMIT $4
  FOR UPDATE SKIP LOCKED
),
deleted AS (
  DELETE FROM jfast_jobs AS j USING doomed WHERE j.id = doomed.id RETURNING 1
)
SELECT count(*)::integer AS deleted FROM deleted
