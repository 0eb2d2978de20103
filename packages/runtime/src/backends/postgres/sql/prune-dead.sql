-- Deletes one batch of dead letters that died before $2, oldest first (docs/queues.md#retention). Skips rows
-- another transaction holds (a retry or discard of the same dead letter). The dead counter's statement trigger
-- (0006) subtracts the batch once.
-- params: $1 queue, $2 cutoff (timestamptz, ISO-8601), $3 batch size
-- result: one row { deleted: count }
-- index:  jfast_jobs_dead_idx (queue, died_at DESC, seq DESC), read backwards from its oldest end
WITH doomed AS (
  SELECT id FROM jfast_jobs
  WHERE queue = $1 AND phase = 'dead' AND died_at < $2::timestamptz
  ORDER BY died_at ASC, seq ASC
  LIMIT $3
  FOR UPDATE SKIP LOCKED
),
deleted AS (
  DELETE FROM jfast_jobs AS j USING doomed WHERE j.id = doomed.id RETURNING 1
)
SELECT count(*)::integer AS deleted FROM deleted
