-- Deletes one batch of dead letters that died before $2, oldest first (docs/queues.md#retention). Skips rows
-- another transaction holds (a retry or discard of the same dead letter). The dead counter's statement trigger
-- (0006) subtracts the batch once.
-- params: $1 queue, $2 cutoff (timestamptz, ISO-8601), $3 batch size
-- result: one row { deleted: count }
-- index:  jfast_jobs_dead_idx (queue, died_at DESC, seq DESC), read backwards from its oldest end
--         jfast_jobs_flow_idx and jfast_flows_pkey for the flows of the deleted rows
WITH doomed AS (
  SELECT id FROM jfast_jobs
  WHERE queue = $1 AND phase = 'dead' AND died_at < $2::timestamptz
  ORDER BY died_at ASC, seq ASC
  LIMIT $3
  FOR UPDATE SKIP LOCKED
),
deleted AS (
  DELETE FROM jfast_jobs AS j USING doomed WHERE j.id = doomed.id RETURNING j.id, j.flow_id
),
-- A finished flow (a cancelled one may keep a dead step) goes with the last of its steps, as in prune-finished.sql.
flows AS (
  DELETE FROM jfast_flows AS f
  WHERE f.id IN (SELECT flow_id FROM deleted WHERE flow_id IS NOT NULL) AND f.finished_at IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM jfast_jobs AS s
                    WHERE s.flow_id = f.id AND NOT EXISTS (SELECT 1 FROM deleted AS d WHERE d.id = s.id))
)
SELECT count(*)::integer AS deleted FROM deleted
