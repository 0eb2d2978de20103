-- Deletes one batch of completed ($2 = 'completed'), cancelled ($2 = 'cancelled') or expired ($2 = 'expired') jobs beyond the newest $3,
-- oldest first (docs/queues.md#retention: keep_* as a count). Skips rows another transaction holds.
-- params: $1 queue, $2 phase, $3 how many of the newest to keep, $4 batch size
-- result: one row { deleted: count } (jobs; the flows that go with them are not counted)
-- index:  jfast_jobs_finished_idx (queue, phase, finished_at); for 'expired' jfast_jobs_expired_idx (queue, finished_at): read newest first past the $3 kept ones
--         jfast_jobs_flow_idx and jfast_flows_pkey for the flows of the deleted rows
WITH doomed AS (
  SELECT id FROM jfast_jobs
  WHERE queue = $1 AND phase = $2::text AND phase IN ('completed', 'cancelled', 'expired')
    -- A step of a flow still running is kept: the steps after it read its result (docs/flows.md#states).
    AND (flow_id IS NULL OR NOT EXISTS (SELECT 1 FROM jfast_flows AS rf WHERE rf.id = jfast_jobs.flow_id AND rf.finished_at IS NULL))
  ORDER BY finished_at DESC
  OFFSET $3
  LIMIT $4
  FOR UPDATE SKIP LOCKED
),
deleted AS (
  DELETE FROM jfast_jobs AS j USING doomed WHERE j.id = doomed.id RETURNING j.id, j.flow_id
),
-- A finished flow (completed or cancelled) goes with the last of its steps (docs/postgres.md#retention). The statement
-- still sees the rows it deletes, hence the second NOT EXISTS.
flows AS (
  DELETE FROM jfast_flows AS f
  WHERE f.id IN (SELECT flow_id FROM deleted WHERE flow_id IS NOT NULL) AND f.finished_at IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM jfast_jobs AS s
                    WHERE s.flow_id = f.id AND NOT EXISTS (SELECT 1 FROM deleted AS d WHERE d.id = s.id))
)
SELECT count(*)::integer AS deleted FROM deleted
