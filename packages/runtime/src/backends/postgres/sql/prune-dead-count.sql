-- Deletes one batch of dead letters beyond the newest $2, oldest among them first (docs/queues.md#retention:
-- keep_dead as a count). Skips rows another transaction holds.
-- params: $1 queue, $2 how many of the newest to keep, $3 batch size
-- result: one row { deleted: count }
-- index:  jfast_jobs_dead_idx (queue, died_at DESC, seq DESC), read in its order past the $2 kept ones
--         jfast_jobs_flow_idx and jfast_flows_pkey for the flows of the deleted rows
WITH doomed AS (
  SELECT id FROM jfast_jobs
  WHERE queue = $1 AND phase = 'dead'
  ORDER BY died_at DESC, seq DESC
  OFFSET $2
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
