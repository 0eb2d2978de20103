-- Deletes one batch of completed ($2 = 'completed') or cancelled ($2 = 'cancelled') jobs that finished before $3,
-- oldest first (docs/queues.md#retention). A row another transaction holds is skipped, never waited for, so a
-- batch takes short row locks only and the pruner never queues behind a worker.
-- params: $1 queue, $2 phase, $3 cutoff (timestamptz, ISO-8601), $4 batch size
-- result: one row { deleted: count }
-- index:  jfast_jobs_finished_idx (queue, phase, finished_at), a range read from its start
WITH doomed AS (
  SELECT id FROM jfast_jobs
  WHERE queue = $1 AND phase = $2::text AND phase IN ('completed', 'cancelled') AND finished_at < $3::timestamptz
  ORDER BY finished_at
  LIMIT $4
  FOR UPDATE SKIP LOCKED
),
deleted AS (
  DELETE FROM jfast_jobs AS j USING doomed WHERE j.id = doomed.id RETURNING 1
)
SELECT count(*)::integer AS deleted FROM deleted
